package ticketd

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// The client's hand-out of leased blocks across goroutines (pure logic: the leases come from a
// stand-in for ticketd's block route; the real route is exercised by the conformance scenarios).

type blockSource struct {
	mu      sync.Mutex
	size    uint64
	tickets uint64
	leased  [][2]uint64
}

func (s *blockSource) lease(ctx context.Context) (block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tickets++
	// Blocks of both parities, as two backends would lease them: not in increasing order.
	ticket := s.tickets*2 + (s.tickets%2)*1000
	first := ticket * s.size
	last := first + s.size - 1
	s.leased = append(s.leased, [2]uint64{first, last})
	return block{first: first, last: last, prefetchAt: last - s.size/2}, nil
}

func TestBlocksAreHandedOutOnceAcrossGoroutines(t *testing.T) {
	source := &blockSource{size: 100}
	c, err := NewClient(Options{URLs: []string{"http://unused.invalid"}, Sequence: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c.leaser = source.lease
	defer c.Close()
	if _, err := c.NextNow(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("NextNow before any lease: %v, want EMPTY", err)
	}
	const workers, each = 8, 5000
	got := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < each; k++ {
				var id uint64
				var err error
				if k%5 == 1 {
					// A run of IDs from one atomic add, across the ends of blocks too.
					batch, err := c.NextBatch(context.Background(), 7)
					if err != nil || len(batch) != 7 {
						t.Error(err, len(batch))
						return
					}
					got[w] = append(got[w], batch...)
					continue
				}
				if k%3 == 0 {
					id, err = c.NextNow()
					if errors.Is(err, ErrEmpty) {
						id, err = c.Next(context.Background())
					}
				} else {
					id, err = c.Next(context.Background())
				}
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], id)
			}
		}(w)
	}
	wg.Wait()
	seen := map[uint64]bool{}
	source.mu.Lock()
	defer source.mu.Unlock()
	for _, ids := range got {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %d handed out twice", id)
			}
			seen[id] = true
			inside := false
			for _, b := range source.leased {
				inside = inside || (id >= b[0] && id <= b[1])
			}
			if !inside {
				t.Fatalf("ID %d is in no leased block", id)
			}
		}
	}
	if want := workers * (each + 6*each/5); len(seen) != want {
		t.Fatalf("%d IDs, want %d", len(seen), want)
	}
	if n := uint64(len(source.leased)); n*100 < uint64(len(seen)) || n > uint64(len(seen))/100+MaxBlocksAhead+1 {
		t.Fatalf("%d blocks leased for %d IDs", n, len(seen))
	}
	if c.Leases() != int64(len(source.leased)) {
		t.Fatalf("Leases() = %d, leased %d", c.Leases(), len(source.leased))
	}
}

func TestCloseRefusesFurtherCalls(t *testing.T) {
	c, err := NewClient(Options{URLs: []string{"http://unused.invalid"}, Sequence: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c.leaser = (&blockSource{size: 10}).lease
	if _, err := c.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrLeaseFailed) {
		t.Fatalf("Next after Close: %v, want LEASE_FAILED", err)
	}
	if _, err := NewClient(Options{Sequence: "test"}); !errors.Is(err, ErrLeaseFailed) {
		t.Fatalf("no URLs: %v", err)
	}
}
