package ticketd

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// SnowflakeLayout is the bit widths of a Snowflake ID, most significant first: milliseconds since
// the epoch, worker ID, sequence within a millisecond. At most 63 bits in all, so IDs stay
// positive as int64; the zero value stands for DefaultLayout.
type SnowflakeLayout struct {
	TimeBits     int
	WorkerBits   int
	SequenceBits int
}

// SnowflakeParts is an ID taken apart.
type SnowflakeParts struct {
	TimestampMs int64
	WorkerID    int
	Sequence    int
}

// DefaultLayout is Twitter's: 41 bits of milliseconds (69 years), 10 of worker ID, 12 of sequence (4,096 IDs per ms).
var DefaultLayout = SnowflakeLayout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12}

// DefaultSnowflakeEpochMs is the default epoch: 2024-01-01T00:00:00Z.
const DefaultSnowflakeEpochMs int64 = 1704067200000

var layoutFields = map[string]func(*SnowflakeLayout) *int{
	"timeBits":     func(l *SnowflakeLayout) *int { return &l.TimeBits },
	"workerBits":   func(l *SnowflakeLayout) *int { return &l.WorkerBits },
	"sequenceBits": func(l *SnowflakeLayout) *int { return &l.SequenceBits },
}

// CompleteLayout completes a layout given as some of its widths by name (timeBits, workerBits,
// sequenceBits, as in JSON) with DefaultLayout's, and checks it; it fails with CodeSnowflakeLayout.
func CompleteLayout(given map[string]interface{}) (SnowflakeLayout, error) {
	layout := DefaultLayout
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		field, ok := layoutFields[name]
		if !ok {
			return SnowflakeLayout{}, newError(CodeSnowflakeLayout, fmt.Sprintf("layout has no %s; it has timeBits, workerBits, sequenceBits", name))
		}
		var width float64
		switch v := given[name].(type) {
		case int:
			width = float64(v)
		case int64:
			width = float64(v)
		case float64:
			width = v
		default:
			return SnowflakeLayout{}, newError(CodeSnowflakeLayout, fmt.Sprintf("layout.%s must be a positive integer; got %v", name, v))
		}
		if width != math.Trunc(width) || width < 1 || width > 64 {
			return SnowflakeLayout{}, newError(CodeSnowflakeLayout, fmt.Sprintf("layout.%s must be a positive integer; got %v", name, width))
		}
		*field(&layout) = int(width)
	}
	return layout, layout.Check()
}

// Check fails with CodeSnowflakeLayout when a width is below 1, the widths add up to more than 63
// bits, or TimeBits is over 48.
func (l SnowflakeLayout) Check() error {
	for name, field := range layoutFields {
		if *field(&l) < 1 {
			return newError(CodeSnowflakeLayout, fmt.Sprintf("layout.%s must be a positive integer; got %d", name, *field(&l)))
		}
	}
	if total := l.TimeBits + l.WorkerBits + l.SequenceBits; total > 63 {
		return newError(CodeSnowflakeLayout, fmt.Sprintf("layout adds up to %d bits; at most 63 (timeBits %d + workerBits %d + sequenceBits %d)", total, l.TimeBits, l.WorkerBits, l.SequenceBits))
	}
	if l.TimeBits > 48 {
		return newError(CodeSnowflakeLayout, fmt.Sprintf("layout.timeBits is at most 48 (8,900 years of milliseconds); got %d", l.TimeBits))
	}
	return nil
}

func (l SnowflakeLayout) orDefault() SnowflakeLayout {
	if l == (SnowflakeLayout{}) {
		return DefaultLayout
	}
	return l
}

// Decompose takes an ID apart by the layout (the zero layout: DefaultLayout) and epoch.
func Decompose(id uint64, layout SnowflakeLayout, epochMs int64) SnowflakeParts {
	layout = layout.orDefault()
	seq := uint(layout.SequenceBits)
	return SnowflakeParts{
		TimestampMs: int64(id>>(seq+uint(layout.WorkerBits))) + epochMs,
		WorkerID:    int(id >> seq & (1<<uint(layout.WorkerBits) - 1)),
		Sequence:    int(id & (1<<seq - 1)),
	}
}

// Compose is the ID of (timestamp, worker ID, sequence): the inverse of Decompose. It fails with
// CodeSnowflakeLayout for a time before the epoch or past the layout's last millisecond.
func Compose(timestampMs int64, workerID, sequence int, layout SnowflakeLayout, epochMs int64) (uint64, error) {
	first, err := firstIDOf(timestampMs, workerID, layout.orDefault(), epochMs)
	if err != nil {
		return 0, err
	}
	return first | uint64(sequence), nil
}

// firstIDOf is the first ID of a millisecond for a worker.
func firstIDOf(ms int64, workerID int, layout SnowflakeLayout, epochMs int64) (uint64, error) {
	since := ms - epochMs
	if since < 0 || since >= int64(1)<<uint(layout.TimeBits) {
		return 0, newError(CodeSnowflakeLayout, fmt.Sprintf("time %s does not fit %d bits of milliseconds since the epoch %s", isoMs(ms), layout.TimeBits, isoMs(epochMs)))
	}
	return uint64(since)<<uint(layout.WorkerBits+layout.SequenceBits) | uint64(workerID)<<uint(layout.SequenceBits), nil
}

// isoMs writes Unix milliseconds as an ISO 8601 UTC time.
func isoMs(ms int64) string {
	text := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	if strings.HasPrefix(text, "-") || len(text) > 24 {
		return fmt.Sprintf("%d ms since 1970", ms)
	}
	return text
}
