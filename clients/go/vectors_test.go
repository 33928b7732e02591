package ticketd

import (
	"crypto/aes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The shared vectors (clients/vectors/, written from the TypeScript client): every value identical.

// load reads a vector file of clients/vectors. Outside a ticketd checkout (the module as a proxy
// serves it) there is none: the test says so and skips, or fails when CI is set.
func load(t *testing.T, name string, into interface{}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "vectors", name))
	if errors.Is(err, os.ErrNotExist) && os.Getenv("CI") == "" {
		t.Skipf("the shared vectors are not here (%v): they live in a ticketd checkout, clients/vectors", err)
	}
	if err != nil {
		t.Fatalf("the shared vectors: %v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func parse(t *testing.T, text string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		t.Fatalf("not a 64-bit ID: %s", text)
	}
	return v
}

func wantCode(t *testing.T, err error, code string, what string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Errorf("%s: got %v, want an error with code %s", what, err, code)
	}
}

func TestAES256BlocksMatchOpenSSL(t *testing.T) {
	var v struct {
		Blocks []struct{ Key, Plaintext, Ciphertext string }
	}
	load(t, "aes256.json", &v)
	for _, b := range v.Blocks {
		key, _ := hex.DecodeString(b.Key)
		in, _ := hex.DecodeString(b.Plaintext)
		block, err := aes.NewCipher(key)
		if err != nil || len(key) != 32 {
			t.Fatalf("key %s: %v", b.Key, err)
		}
		out := make([]byte, 16)
		block.Encrypt(out, in)
		if hex.EncodeToString(out) != b.Ciphertext {
			t.Errorf("AES-256(%s, %s) = %x, want %s", b.Key, b.Plaintext, out, b.Ciphertext)
		}
	}
	if len(v.Blocks) == 0 {
		t.Fatal("no AES blocks in the vectors")
	}
}

type permutationVectors struct {
	Schemes  map[string]PermutationScheme
	KeyBytes int
	Refused  struct {
		Code string
		Keys []struct{ Key, Code string }
		// Domains are decimal strings, some outside 0..2^64-1 on purpose.
		Domains []struct{ StartAfter, MaxID, Code string } `json:"domains"`
		Schemes []string
	}
	Cases []struct {
		Scheme, KeyName, Key, Domain string
		StartAfter                   string
		MaxID                        string `json:"maxId"`
		Pairs                        [][2]string
		Run                          struct {
			First  string
			Opaque []string
		}
		Outside []string
	}
}

func TestPermutationVectors(t *testing.T) {
	var v permutationVectors
	load(t, "permutation.json", &v)
	if len(v.Schemes) != len(PermutationSchemes) || v.KeyBytes != KeyBytes {
		t.Fatalf("schemes %v / key bytes %d; vectors have %v / %d", PermutationSchemes, KeyBytes, v.Schemes, v.KeyBytes)
	}
	for name, s := range v.Schemes {
		if PermutationSchemes[name] != s {
			t.Errorf("scheme %s: %v, vectors %v", name, PermutationSchemes[name], s)
		}
	}
	pairs := 0
	for _, c := range v.Cases {
		key, err := decodeKey(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		p, err := permutationFromText(key, c.StartAfter, c.MaxID, c.Scheme)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Scheme, c.Domain, err)
		}
		for _, pair := range c.Pairs {
			ordered, opaque := parse(t, pair[0]), parse(t, pair[1])
			if got, err := p.Encode(ordered); err != nil || got != opaque {
				t.Errorf("%s %s %s: P(%d) = %d %v, want %d", c.Scheme, c.KeyName, c.Domain, ordered, got, err, opaque)
			}
			if got, err := p.Decode(opaque); err != nil || got != ordered {
				t.Errorf("%s %s %s: P⁻¹(%d) = %d %v, want %d", c.Scheme, c.KeyName, c.Domain, opaque, got, err, ordered)
			}
			pairs++
		}
		run := make([]uint64, len(c.Run.Opaque))
		if err := p.EncodeRun(parse(t, c.Run.First), run); err != nil {
			t.Errorf("%s %s: run: %v", c.Scheme, c.Domain, err)
		}
		for k, want := range c.Run.Opaque {
			if run[k] != parse(t, want) {
				t.Errorf("%s %s: run[%d] = %d, want %s", c.Scheme, c.Domain, k, run[k], want)
			}
		}
		for _, outside := range c.Outside {
			id := parse(t, outside)
			_, err := p.Encode(id)
			wantCode(t, err, v.Refused.Code, "encode of "+outside)
			_, err = p.Decode(id)
			wantCode(t, err, v.Refused.Code, "decode of "+outside)
		}
	}
	if pairs < 1000 {
		t.Fatalf("only %d pairs checked", pairs)
	}
}

func TestPermutationRefusals(t *testing.T) {
	var v permutationVectors
	load(t, "permutation.json", &v)
	fixed := make([]byte, 32)
	for k := range fixed {
		fixed[k] = byte(k)
	}
	for _, bad := range v.Refused.Keys {
		key, err := decodeKey(bad.Key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewPermutation(key, 0, 1000, PermutationSchemeName)
		wantCode(t, err, bad.Code, "key "+bad.Key)
	}
	for _, bad := range v.Refused.Domains {
		_, err := permutationFromText(fixed, bad.StartAfter, bad.MaxID, PermutationSchemeName)
		wantCode(t, err, bad.Code, "domain ("+bad.StartAfter+", "+bad.MaxID+"]")
	}
	for _, scheme := range v.Refused.Schemes {
		_, err := NewPermutation(fixed, 0, 1000, scheme)
		wantCode(t, err, v.Refused.Code, "scheme "+scheme)
	}
	if len(v.Refused.Domains) == 0 || len(v.Refused.Keys) == 0 || len(v.Refused.Schemes) == 0 {
		t.Fatal("no refusals in the vectors")
	}
}

func TestSnowflakeVectors(t *testing.T) {
	var v struct {
		DefaultLayout  SnowflakeLayout
		DefaultEpochMs int64
		Cases          []struct {
			Given   map[string]interface{}
			Layout  SnowflakeLayout
			EpochMs int64
			IDs     []struct {
				TimestampMs int64
				WorkerID    int `json:"workerId"`
				Sequence    int
				ID          string `json:"id"`
			} `json:"ids"`
			Outside []struct {
				TimestampMs int64
				Code        string
			}
		}
		RefusedLayouts []struct {
			Given map[string]interface{}
			Code  string
		}
	}
	load(t, "snowflake.json", &v)
	if v.DefaultLayout != DefaultLayout || v.DefaultEpochMs != DefaultSnowflakeEpochMs {
		t.Fatalf("default layout %v epoch %d; vectors %v %d", DefaultLayout, DefaultSnowflakeEpochMs, v.DefaultLayout, v.DefaultEpochMs)
	}
	count := 0
	for _, c := range v.Cases {
		layout, err := CompleteLayout(c.Given)
		if err != nil || layout != c.Layout {
			t.Fatalf("layout %v: %v %v, want %v", c.Given, layout, err, c.Layout)
		}
		for _, id := range c.IDs {
			want := parse(t, id.ID)
			got, err := Compose(id.TimestampMs, id.WorkerID, id.Sequence, layout, c.EpochMs)
			if err != nil || got != want {
				t.Errorf("compose %v %d: %d %v, want %d", layout, c.EpochMs, got, err, want)
			}
			parts := Decompose(want, layout, c.EpochMs)
			if parts != (SnowflakeParts{TimestampMs: id.TimestampMs, WorkerID: id.WorkerID, Sequence: id.Sequence}) {
				t.Errorf("decompose %d: %v", want, parts)
			}
			count++
		}
		for _, out := range c.Outside {
			_, err := firstIDOf(out.TimestampMs, 0, layout, c.EpochMs)
			wantCode(t, err, out.Code, "time "+strconv.FormatInt(out.TimestampMs, 10))
		}
	}
	if count < 300 {
		t.Fatalf("only %d IDs checked", count)
	}
	for _, bad := range v.RefusedLayouts {
		_, err := CompleteLayout(bad.Given)
		wantCode(t, err, bad.Code, "layout")
	}
	if len(v.RefusedLayouts) == 0 {
		t.Fatal("no refused layouts in the vectors")
	}
}

func TestEveryErrorHasTheTypeScriptCode(t *testing.T) {
	var v struct{ Codes map[string]string }
	load(t, "errors.json", &v)
	sentinels := map[string]*Error{
		"NoBufferedIdsError":   ErrEmpty,
		"StrictSequenceError":  ErrStrict,
		"LeaseFailedError":     ErrLeaseFailed,
		"OpaqueIdError":        ErrOpaqueID,
		"NoLeaseError":         ErrNoLease,
		"ClockMovedBackError":  ErrClockBack,
		"ClockSkewError":       ErrClockSkew,
		"SnowflakeLayoutError": ErrSnowflakeLayout,
	}
	if len(v.Codes) != len(sentinels) {
		t.Fatalf("errors.json has %d errors; the Go client %d", len(v.Codes), len(sentinels))
	}
	for name, code := range v.Codes {
		sentinel, ok := sentinels[name]
		if !ok || sentinel.Code != code {
			t.Errorf("%s: want code %s", name, code)
			continue
		}
		err := error(newError(code, "a failure"))
		if !errors.Is(err, sentinel) {
			t.Errorf("errors.Is(%s error, its sentinel) is false", code)
		}
	}
	if errors.Is(newError(CodeEmpty, "x"), ErrStrict) {
		t.Error("errors.Is matched another code")
	}
}
