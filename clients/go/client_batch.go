package ticketd

import "context"

// NextBatch returns count IDs, in the order handed out (a strict sequence's in increasing order,
// in as few requests as ticketd's limit allows). From a buffered block, a run of IDs costs one atomic add.
func (c *Client) NextBatch(ctx context.Context, count int) ([]uint64, error) {
	ids := make([]uint64, 0, count)
	for len(ids) < count {
		if strict := c.strictIDs(); strict != nil {
			rest, err := strict.batch(ctx, count-len(ids))
			return append(ids, rest...), err
		}
		ids = c.takeRun(ids, count-len(ids))
		if len(ids) == count {
			break
		}
		id, err := c.Next(ctx)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// takeRun appends up to n IDs of the hot block, drawn with one atomic add: all of them below its
// prefetch point, else those drawn inside the block (the prefetch then starts as in Next).
func (c *Client) takeRun(ids []uint64, n int) []uint64 {
	h := c.hot.Load()
	k := h.drawn.Add(uint64(n)) - uint64(n)
	if k+uint64(n) <= h.end.Load() {
		for j := uint64(0); j < uint64(n); j++ {
			ids = append(ids, h.first+k+j)
		}
		return ids
	}
	// Offsets drawn past the block's end are never handed out, by anyone.
	for j := k; j < k+uint64(n) && j < h.size; j++ {
		ids = append(ids, h.first+j)
	}
	c.mu.Lock()
	if c.hot.Load() == h && h.end.Load() < h.size && k < h.size {
		c.pastPrefetchPoint(h)
	}
	c.mu.Unlock()
	return ids
}

func (c *Client) strictIDs() *strictIDs {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.strict
}
