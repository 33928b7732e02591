// Command ticketd-conformance is the Go client's side of the conformance scenarios
// (clients/conformance.md). The jest file test/integration/go-client.test.ts starts the servers,
// causes the faults, and judges what these commands print; they only use the client as an
// application would and report what it did.
//
//	ticketd-conformance hand-out <urls> <sequence> <goroutines> <seconds> <ids-file>   IDs one per line; a summary
//	ticketd-conformance opaque   <urls> <sequence> <token> <count>                     pairs (opaque ID, decode)
//	ticketd-conformance strict   <urls> <sequence> <goroutines> <calls-each>           each call's ID and times
//	ticketd-conformance retired  <urls> <sequence> <block-size>                       waits for a line on stdin
//	ticketd-conformance close-returns <urls> <sequence> <token> <take> <then>         two clients, each closed
//
// Every command prints one JSON line last: {"scenario": ..., ...}. URLs are comma-separated.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"ticketd.dev/ticketd"
)

func report(body map[string]interface{}) {
	line, _ := json.Marshal(body)
	fmt.Println(string(line))
}

func codeOf(err error) (string, []string) {
	var e *ticketd.Error
	if errors.As(err, &e) {
		return e.Code, append([]string{}, e.Codes...)
	}
	return "unknown", []string{}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// handOut: goroutines calling Next for a while; every ID handed out is written, every failed call counted.
func handOut(urls []string, sequence string, workers int, seconds float64, idsFile string) {
	client, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence})
	must(err)
	out, err := os.Create(idsFile)
	must(err)
	var mu sync.Mutex
	var failures []string
	total := 0
	until := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	flush := func(ids []uint64) {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(strconv.FormatUint(id, 10))
			b.WriteByte('\n')
		}
		mu.Lock()
		_, _ = out.WriteString(b.String())
		total += len(ids)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]uint64, 0, 500)
			for time.Now().Before(until) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				id, err := client.Next(ctx)
				cancel()
				if err != nil {
					code, _ := codeOf(err)
					mu.Lock()
					failures = append(failures, code+": "+err.Error())
					mu.Unlock()
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if mine = append(mine, id); len(mine) >= 500 {
					flush(mine)
					mine = mine[:0]
				}
			}
			flush(mine)
		}()
	}
	wg.Wait()
	must(out.Close())
	leases := client.Leases()
	must(client.Close())
	first := failures
	if len(first) > 5 {
		first = first[:5]
	}
	report(map[string]interface{}{"scenario": "hand-out", "ids": total, "failed": len(failures), "firstFailures": first, "leases": leases})
}

// opaque: opaque IDs handed out with the sequence's token, each with the client's own decoding; and the key refused without it.
func opaque(urls []string, sequence, token string, count int) {
	ctx := context.Background()
	client, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence, Token: token})
	must(err)
	ids, err := client.NextBatch(ctx, count)
	must(err)
	codec, err := client.Codec(ctx)
	must(err)
	pairs := make([][]interface{}, 0, count)
	for _, id := range ids {
		ordered, err := codec.Decode(id)
		must(err)
		back, err := codec.Encode(ordered)
		must(err)
		pairs = append(pairs, []interface{}{strconv.FormatUint(id, 10), strconv.FormatUint(ordered, 10), back == id})
	}
	must(client.Close())
	without, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence})
	must(err)
	var refused interface{}
	if _, err := without.Codec(ctx); err != nil {
		code, codes := codeOf(err)
		refused = map[string]interface{}{"code": code, "codes": codes}
	}
	must(without.Close())
	report(map[string]interface{}{"scenario": "opaque-decodes-back", "ids": codec.IDs, "pairs": pairs, "withoutToken": refused})
}

// strict: goroutines calling Next at once on a strict sequence; each call's ID with when it began and ended.
func strict(urls []string, sequence string, workers, calls int) {
	ctx := context.Background()
	client, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence})
	must(err)
	first, err := client.Next(ctx)
	must(err)
	var mu sync.Mutex
	done := [][]interface{}{}
	failures := []string{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	origin := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for c := 0; c < calls; c++ {
				began := time.Since(origin).Nanoseconds()
				id, err := client.Next(ctx)
				ended := time.Since(origin).Nanoseconds()
				mu.Lock()
				if err != nil {
					code, _ := codeOf(err)
					failures = append(failures, code+": "+err.Error())
				} else {
					done = append(done, []interface{}{strconv.FormatUint(id, 10), began, ended})
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	var now interface{}
	if _, err := client.NextNow(); err != nil {
		now, _ = codeOf(err)
	}
	batch, err := client.NextBatch(ctx, 5)
	must(err)
	texts := make([]string, len(batch))
	for k, id := range batch {
		texts[k] = strconv.FormatUint(id, 10)
	}
	requests := client.StrictRequests()
	isStrict := client.Strict()
	must(client.Close())
	report(map[string]interface{}{"scenario": "strict-coalesced", "first": strconv.FormatUint(first, 10), "calls": done, "failed": failures, "requests": requests, "nowait": now, "batch": texts, "strict": isStrict})
}

// retired: one ID, then (once stdin says the sequence is retired) Next until it fails: how many more and why.
func retired(urls []string, sequence string, blockSize int) {
	ctx := context.Background()
	client, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence})
	must(err)
	first, err := client.Next(ctx)
	must(err)
	report(map[string]interface{}{"event": "first", "id": strconv.FormatUint(first, 10)})
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	after := []string{}
	var refused interface{}
	for k := 0; k < blockSize*4; k++ {
		id, err := client.Next(ctx)
		if err != nil {
			code, codes := codeOf(err)
			refused = map[string]interface{}{"code": code, "codes": codes, "message": err.Error()}
			break
		}
		after = append(after, strconv.FormatUint(id, 10))
	}
	must(client.Close())
	report(map[string]interface{}{"scenario": "retired-refused", "first": strconv.FormatUint(first, 10), "after": after, "refused": refused})
}

// closeReturns: a client with the sequence's token takes a few IDs and is closed, which gives the rest
// of its blocks back; a second client then takes more and is closed too. Each ID with the client's
// own decoding (the block's ordered ID), and what each Close reported.
func closeReturns(urls []string, sequence, token string, take, then int) {
	taken, takenOrdered, returns := takeAndClose(urls, sequence, token, take)
	after, afterOrdered, afterReturns := takeAndClose(urls, sequence, token, then)
	report(map[string]interface{}{"scenario": "close-returns", "taken": taken, "takenOrdered": takenOrdered, "returns": returns,
		"after": after, "afterOrdered": afterOrdered, "afterReturns": afterReturns})
}

func takeAndClose(urls []string, sequence, token string, count int) ([]string, []string, []map[string]interface{}) {
	ctx := context.Background()
	var mu sync.Mutex
	events := []map[string]interface{}{}
	onEvent := func(e ticketd.ClientEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, map[string]interface{}{"type": e.Type, "first": strconv.FormatUint(e.First, 10),
			"last": strconv.FormatUint(e.Last, 10), "count": e.Count, "error": e.Error, "codes": append([]string{}, e.Codes...)})
	}
	client, err := ticketd.NewClient(ticketd.Options{URLs: urls, Sequence: sequence, Token: token, OnEvent: onEvent})
	must(err)
	ids, err := client.NextBatch(ctx, count)
	must(err)
	codec, err := client.Codec(ctx)
	must(err)
	texts, ordered := make([]string, len(ids)), make([]string, len(ids))
	for k, id := range ids {
		o, err := codec.Decode(id)
		must(err)
		texts[k], ordered[k] = strconv.FormatUint(id, 10), strconv.FormatUint(o, 10)
	}
	must(client.Close())
	mu.Lock()
	defer mu.Unlock()
	return texts, ordered, events
}

func number(text string) int {
	n, err := strconv.Atoi(text)
	must(err)
	return n
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: ticketd-conformance hand-out|opaque|strict|retired|close-returns <urls> <sequence> ...")
		os.Exit(2)
	}
	command, rest := os.Args[1], os.Args[2:]
	urls := strings.Split(rest[0], ",")
	switch {
	case command == "hand-out" && len(rest) == 5:
		seconds, err := strconv.ParseFloat(rest[3], 64)
		must(err)
		handOut(urls, rest[1], number(rest[2]), seconds, rest[4])
	case command == "opaque" && len(rest) == 4:
		opaque(urls, rest[1], rest[2], number(rest[3]))
	case command == "strict" && len(rest) == 4:
		strict(urls, rest[1], number(rest[2]), number(rest[3]))
	case command == "retired" && len(rest) == 3:
		retired(urls, rest[1], number(rest[2]))
	case command == "close-returns" && len(rest) == 5:
		closeReturns(urls, rest[1], rest[2], number(rest[3]), number(rest[4]))
	default:
		fmt.Fprintf(os.Stderr, "unknown command or arguments: %s %v\n", command, rest)
		os.Exit(2)
	}
}
