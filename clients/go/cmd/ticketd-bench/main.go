// Command ticketd-bench measures the Go client against a running ticketd, for bench/go-client.ts
// (scenario 12), beside Go's in-process baseline in the same run.
//
//	ticketd-bench <url> <admin-token> <sequence>[:<blocks label>[:<client token>]] ...
//
// It prints one JSON line: {"go": version, "results": [{"name", "idsPerSecond"}...], "checked": n}.
// Each figure is the best of three runs of 0.3 s spent in the calls, in chunks of 1,000 (as
// bench/in-process.ts does for the Node SDK); the baseline's runs alternate with those of the
// sequence of blocks of 1,000,000. Every ID measured is kept and checked, outside the
// time measured: a repeat fails the run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"ticketd.dev/ticketd"
)

const (
	runFor = 300 * time.Millisecond
	rounds = 3
	chunk  = 1000
)

type result struct {
	Name         string `json:"name"`
	IDsPerSecond int64  `json:"idsPerSecond"`
}

var checked int

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// measured is a figure to take: its name, a fill of 1,000 IDs, and whether its IDs are checked for repeats.
type measured struct {
	name   string
	fill   func(out []uint64)
	unique bool
}

// timeChunks is the best IDs/s of each over rounds runs of runFor, calling its fill (1,000 IDs)
// repeatedly; the rounds of several alternate, so a shared machine's load falls on all alike.
func timeChunks(all ...measured) []result {
	best := make([]float64, len(all))
	buffer := make([]uint64, chunk)
	for r := 0; r < rounds; r++ {
		for m, one := range all {
			var ids []uint64
			n := 0
			// Only the calls are timed: keeping the IDs for the check below is not the client's cost.
			var spent time.Duration
			for spent < runFor {
				start := time.Now()
				one.fill(buffer)
				spent += time.Since(start)
				if one.unique {
					ids = append(ids, buffer...)
				}
				n += chunk
			}
			if rate := float64(n) / spent.Seconds(); rate > best[m] {
				best[m] = rate
			}
			if one.unique {
				sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
				for k := 1; k < len(ids); k++ {
					if ids[k] == ids[k-1] {
						fail("%s: ID %d repeated", one.name, ids[k])
					}
				}
				checked += len(ids)
			}
		}
	}
	results := make([]result, len(all))
	for m, one := range all {
		results[m] = result{Name: one.name, IDsPerSecond: int64(best[m])}
	}
	return results
}

func putPool(url, admin, pool string, workerBits int) {
	body, _ := json.Marshal(map[string]int{"workerBits": workerBits})
	req, _ := http.NewRequest("PUT", url+"/v1/worker-pools/"+pool, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fail("PUT pool %s: %v", pool, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 && res.StatusCode != 201 {
		fail("PUT pool %s: %d", pool, res.StatusCode)
	}
}

// baseline is Go's in-process baseline: one atomic add per ID, no client.
func baseline() measured {
	var counter int64
	return measured{"Go atomic.AddInt64 (in-process baseline, no client)", func(out []uint64) {
		for k := range out {
			out[k] = uint64(atomic.AddInt64(&counter, 1))
		}
	}, true}
}

// ticketClient measures Next, NextNow and NextBatch on one sequence, with the baseline's rounds between theirs when withBaseline.
func ticketClient(url, sequence, blocks, token string, withBaseline bool) []result {
	ctx := context.Background()
	client, err := ticketd.NewClient(ticketd.Options{URLs: []string{url}, Sequence: sequence, Token: token})
	if err != nil {
		fail("%v", err)
	}
	defer client.Close()
	if _, err := client.Next(ctx); err != nil {
		fail("%s: %v", sequence, err)
	}
	codec, err := client.Codec(ctx)
	if err != nil {
		fail("%s: %v", sequence, err)
	}
	kind := ""
	if codec.IDs == "opaque" {
		kind = "opaque IDs, "
	}
	label := fmt.Sprintf("(%sleases blocks of %s)", kind, blocks)
	next := func(out []uint64) {
		for k := range out {
			id, err := client.Next(ctx)
			if err != nil {
				fail("Next: %v", err)
			}
			out[k] = id
		}
	}
	now := func(out []uint64) {
		for k := range out {
			id, err := client.NextNow()
			if errors.Is(err, ticketd.ErrEmpty) {
				id, err = client.Next(ctx)
			}
			if err != nil {
				fail("NextNow: %v", err)
			}
			out[k] = id
		}
	}
	batch := func(out []uint64) {
		ids, err := client.NextBatch(ctx, len(out))
		if err != nil {
			fail("NextBatch: %v", err)
		}
		copy(out, ids)
	}
	all := []measured{
		{"Go Client.Next() " + label, next, true},
		{"Go Client.NextNow() " + label, now, true},
		{"Go Client.NextBatch(1000) " + label, batch, true},
	}
	if withBaseline {
		all = append([]measured{baseline()}, all...)
	}
	return timeChunks(all...)
}

func snowflakes(url, admin string) []result {
	ctx := context.Background()
	putPool(url, admin, "bench_go_default", 10)
	putPool(url, admin, "bench_go_wide", 6)
	var results []result
	for _, c := range []struct {
		pool, label string
		layout      ticketd.SnowflakeLayout
	}{
		{"bench_go_default", "layout 41/10/12: at most 4,096 IDs per ms", ticketd.DefaultLayout},
		{"bench_go_wide", "layout 41/6/16", ticketd.SnowflakeLayout{TimeBits: 41, WorkerBits: 6, SequenceBits: 16}},
	} {
		s, err := ticketd.NewSnowflake(ticketd.SnowflakeOptions{URLs: []string{url}, Pool: c.pool, Layout: c.layout})
		if err != nil {
			fail("%v", err)
		}
		if err := s.Ready(ctx); err != nil {
			fail("%s: %v", c.pool, err)
		}
		results = append(results, timeChunks(measured{"Go Snowflake.Next() (" + c.label + ")", func(out []uint64) {
			for k := range out {
				id, err := s.Next(ctx)
				if err != nil {
					fail("Snowflake.Next: %v", err)
				}
				out[k] = id
			}
		}, true})...)
		_ = s.Close()
	}
	return results
}

func permutation() result {
	key := make([]byte, 32)
	for k := range key {
		key[k] = byte(k)
	}
	p, err := ticketd.NewPermutation(key, 0, 1<<63-1, ticketd.PermutationSchemeName)
	if err != nil {
		fail("%v", err)
	}
	next := uint64(1)
	return timeChunks(measured{"Go Permutation.EncodeRun (63-bit domain, feistel-aes256-v2, crypto/aes)", func(out []uint64) {
		if err := p.EncodeRun(next, out); err != nil {
			fail("%v", err)
		}
		next += uint64(len(out))
	}, true})[0]
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: ticketd-bench <url> <admin-token> <sequence>[:<blocks>[:<token>]] ...")
	}
	url, admin := strings.TrimRight(os.Args[1], "/"), os.Args[2]
	// The baseline's rounds alternate with those of the ordered sequence of the largest blocks (the
	// figure it is set against), or run alone first when there is none.
	var results []result
	paired := -1
	for k, spec := range os.Args[3:] {
		parts := append(strings.Split(spec, ":"), "", "")
		if parts[2] == "" && parts[1] == "1,000,000" {
			paired = k
		}
	}
	if paired < 0 {
		results = append(results, timeChunks(baseline())...)
	}
	for k, spec := range os.Args[3:] {
		parts := append(strings.Split(spec, ":"), "", "")
		blocks := parts[1]
		if blocks == "" {
			blocks = "?"
		}
		results = append(results, ticketClient(url, parts[0], blocks, parts[2], k == paired)...)
	}
	results = append(results, snowflakes(url, admin)...)
	results = append(results, permutation())
	line, _ := json.Marshal(map[string]interface{}{"go": runtime.Version(), "results": results, "checked": checked})
	fmt.Println(string(line))
}
