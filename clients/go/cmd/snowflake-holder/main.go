// Command snowflake-holder mints Snowflake IDs with ticketd.Snowflake, for the conformance
// scenarios that pause, kill and step the clock of real processes (clients/conformance.md).
//
//	snowflake-holder <dir> <name> <pool> <url>[,<url>...] [ids-per-tick]
//
// The same contract as test/support/snowflake-holder.mjs, so the same jest helpers judge both:
// every lease gets a file <dir>/<name>.<workerId>.<epoch>.ids of 8-byte little-endian IDs, written
// after each batch; events go to stdout as JSON lines (camelCase, as the Node holder prints them).
// SIGTERM closes the generator (releasing the lease) and exits.
//
// Two settings for tests, from the environment: TICKETD_HOLDER_NEXT=1 mints with Next (which waits
// for a lease) instead of NextNow; TICKETD_HOLDER_CLOCK_FILE names a file holding an offset of the
// wall clock in seconds ("+3", "-0.5"), read again every few milliseconds. Go reads the time without
// libc, so libfaketime cannot step it as it does the other clients'.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"ticketd.dev/ticketd"
)

// steppedClock is the system clock with an offset read from a file (the test steps it while the holder runs).
type steppedClock struct {
	file     string
	mu       sync.Mutex
	offsetMs int64
	readAt   time.Time
}

func (c *steppedClock) WallMs() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.readAt) > 5*time.Millisecond {
		c.readAt = time.Now()
		if data, err := os.ReadFile(c.file); err == nil {
			if seconds, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil {
				c.offsetMs = int64(seconds * 1000)
			}
		}
	}
	return time.Now().UnixMilli() + c.offsetMs
}

func (c *steppedClock) MonoMs() float64 { return ticketd.SystemClock{}.MonoMs() }

type holder struct {
	name    string
	dir     string
	clock   ticketd.Clock
	outMu   sync.Mutex
	fileMu  sync.Mutex
	current *os.File
}

func (h *holder) say(fields map[string]interface{}) {
	fields["name"] = h.name
	fields["at"] = h.clock.WallMs()
	line, _ := json.Marshal(fields)
	h.outMu.Lock()
	fmt.Println(string(line))
	h.outMu.Unlock()
}

// event writes a generator event as the Node holder does, with the fields its type carries.
func (h *holder) event(e ticketd.SnowflakeEvent) {
	f := map[string]interface{}{"type": e.Type}
	switch e.Type {
	case "leased":
		h.fileMu.Lock()
		if h.current != nil {
			_ = h.current.Close()
		}
		file, err := os.OpenFile(filepath.Join(h.dir, fmt.Sprintf("%s.%d.%s.ids", h.name, e.WorkerID, e.Epoch)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		h.current = file
		h.fileMu.Unlock()
		f["workerId"], f["epoch"], f["expiresInMs"], f["highWaterMs"] = e.WorkerID, e.Epoch, e.ExpiresInMs, e.HighWaterMs
	case "renewed":
		f["workerId"], f["skewMs"] = e.WorkerID, e.SkewMs
	case "renew-failed":
		f["workerId"], f["error"], f["leftMs"] = e.WorkerID, e.Error, e.LeftMs
	case "lease-ended":
		f["workerId"], f["reason"] = e.WorkerID, e.Reason
	case "take-failed":
		f["error"], f["codes"] = e.Error, e.Codes
	case "clock-back":
		f["behindMs"] = e.BehindMs
	case "skew":
		f["skewMs"], f["limitMs"] = e.SkewMs, e.LimitMs
	case "released":
		f["workerId"], f["lastUsedMs"] = e.WorkerID, e.LastUsedMs
	}
	h.say(f)
}

func (h *holder) file() *os.File {
	h.fileMu.Lock()
	defer h.fileMu.Unlock()
	return h.current
}

func write(target *os.File, batch []byte) {
	if len(batch) > 0 && target != nil {
		_, _ = target.Write(batch)
	}
}

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: snowflake-holder <dir> <name> <pool> <url>[,<url>...] [ids-per-tick]")
		os.Exit(2)
	}
	perTick := 200
	if len(os.Args) > 5 {
		n, err := strconv.Atoi(os.Args[5])
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "ids-per-tick must be a positive integer")
			os.Exit(2)
		}
		perTick = n
	}
	h := &holder{dir: os.Args[1], name: os.Args[2], clock: ticketd.SystemClock{}}
	if file := os.Getenv("TICKETD_HOLDER_CLOCK_FILE"); file != "" {
		h.clock = &steppedClock{file: file}
	}
	waiting := os.Getenv("TICKETD_HOLDER_NEXT") == "1"
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	generator, err := ticketd.NewSnowflake(ticketd.SnowflakeOptions{
		URLs: strings.Split(os.Args[4], ","), Pool: os.Args[3], Holder: h.name, Clock: h.clock, OnEvent: h.event,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for ctx.Err() == nil {
		failed := h.tick(ctx, generator, perTick, waiting)
		pause := 10 * time.Millisecond
		if failed {
			pause = 100 * time.Millisecond
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
	}
	_ = generator.Close()
	h.say(map[string]interface{}{"type": "closed"})
}

// tick mints a batch and writes it to the file of the lease it was minted on; it reports whether a call failed.
func (h *holder) tick(ctx context.Context, generator *ticketd.Snowflake, perTick int, waiting bool) bool {
	batch := make([]byte, 0, 8*perTick)
	target := h.file()
	defer func() { write(target, batch) }()
	if _, held := generator.WorkerID(); !held && !waiting {
		if err := generator.Ready(ctx); err != nil {
			return h.failed(ctx, err)
		}
		target = h.file()
	}
	for n := 0; n < perTick; n++ {
		var id uint64
		var err error
		if waiting {
			id, err = generator.Next(ctx)
		} else {
			id, err = generator.NextNow()
		}
		if err != nil {
			return h.failed(ctx, err)
		}
		// The "leased" event is emitted under the generator's lock, before any ID of the new
		// lease: an ID minted after a change of lease goes to the new lease's file.
		if now := h.file(); now != target {
			write(target, batch)
			batch = batch[:0]
			target = now
		}
		batch = binary.LittleEndian.AppendUint64(batch, id)
	}
	return false
}

func (h *holder) failed(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	code := "unknown"
	var e *ticketd.Error
	if errors.As(err, &e) {
		code = e.Code
	}
	h.say(map[string]interface{}{"type": "error", "code": code, "message": err.Error()})
	return true
}
