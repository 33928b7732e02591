package ticketd

import "strings"

// The client's error codes: the same as the Node, Java and Python clients' (clients/vectors/errors.json).
const (
	// CodeEmpty is NextNow's refusal when no block is buffered.
	CodeEmpty = "TICKETD_CLIENT_EMPTY"
	// CodeStrict is NextNow's refusal on a strict sequence, whose IDs are never buffered.
	CodeStrict = "TICKETD_CLIENT_STRICT"
	// CodeLeaseFailed says no ticketd URL leased a block, a worker ID or a key.
	CodeLeaseFailed = "TICKETD_CLIENT_LEASE_FAILED"
	// CodeOpaqueID says a key, scheme or ID an opaque sequence's permutation cannot take.
	CodeOpaqueID = "TICKETD_CLIENT_OPAQUE_ID"
	// CodeNoLease says a Snowflake generator holds no lease of a worker ID now.
	CodeNoLease = "TICKETD_CLIENT_NO_LEASE"
	// CodeClockBack says the clock went back further than MaxStepBack below the last timestamp used.
	CodeClockBack = "TICKETD_CLIENT_CLOCK_BACK"
	// CodeClockSkew says this clock differs from the server's by more than the pool's maxSkewMs.
	CodeClockSkew = "TICKETD_CLIENT_CLOCK_SKEW"
	// CodeSnowflakeLayout says a layout or epoch cannot hold the pool's worker IDs or today's time.
	CodeSnowflakeLayout = "TICKETD_CLIENT_SNOWFLAKE_LAYOUT"
)

// Error is every failure of the client: a stable Code (one of the Code* constants) and a message
// for people. A lease failure also carries the problem codes the servers answered with in Codes
// (TICKETD_POOL_EXHAUSTED, TICKETD_LEASE_LOST, TICKETD_SEQUENCE_RETIRED...).
//
// Retryable is set on a CodeLeaseFailed error when the last URL asked failed on the network or
// answered with a 5xx (503 TICKETD_POOL_EXHAUSTED included): a later try may succeed. Cause is the
// error behind this one (a CodeNoLease error's last lease failure), reached by errors.Unwrap.
type Error struct {
	Code      string
	Message   string
	Codes     []string
	Retryable bool
	Cause     error
}

// Error returns the message followed by the code in parentheses.
func (e *Error) Error() string {
	return e.Message + " (" + e.Code + ")"
}

// Is matches the sentinel of the same code: errors.Is(err, ErrLeaseFailed).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error {
	return e.Cause
}

// HasCode reports whether a server answered with that problem code (TICKETD_SEQUENCE_RETIRED...).
func (e *Error) HasCode(code string) bool {
	for _, c := range e.Codes {
		if c == code {
			return true
		}
	}
	return false
}

// Sentinels for errors.Is; the errors returned are *Error values with a message, never these.
var (
	// ErrEmpty matches CodeEmpty (Node's NoBufferedIdsError).
	ErrEmpty = &Error{Code: CodeEmpty}
	// ErrStrict matches CodeStrict (StrictSequenceError).
	ErrStrict = &Error{Code: CodeStrict}
	// ErrLeaseFailed matches CodeLeaseFailed (LeaseFailedError).
	ErrLeaseFailed = &Error{Code: CodeLeaseFailed}
	// ErrOpaqueID matches CodeOpaqueID (OpaqueIdError).
	ErrOpaqueID = &Error{Code: CodeOpaqueID}
	// ErrNoLease matches CodeNoLease (NoLeaseError).
	ErrNoLease = &Error{Code: CodeNoLease}
	// ErrClockBack matches CodeClockBack (ClockMovedBackError).
	ErrClockBack = &Error{Code: CodeClockBack}
	// ErrClockSkew matches CodeClockSkew (ClockSkewError).
	ErrClockSkew = &Error{Code: CodeClockSkew}
	// ErrSnowflakeLayout matches CodeSnowflakeLayout (SnowflakeLayoutError).
	ErrSnowflakeLayout = &Error{Code: CodeSnowflakeLayout}
)

func newError(code, message string) *Error {
	return &Error{Code: code, Message: message}
}

func leaseFailed(failure string, reasons, codes []string, retryable bool) *Error {
	return &Error{Code: CodeLeaseFailed, Message: failure + ": " + strings.Join(reasons, "; "), Codes: codes, Retryable: retryable}
}
