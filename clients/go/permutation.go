package ticketd

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
)

// tableBits: halves of at most this many bits get F as a table per round, built once on first use.
const tableBits = 16

// Permutation is an opaque sequence's keyed permutation P of its ID domain (startAfter, maxId]
// onto itself, bit for bit the same as ticketd's (docs/opaque-ids.md): the ID's index in the domain
// is split into a high part A of u bits and a low part B of v bits (u + v = w, the bits of the
// largest index); even rounds add F(round, A) to B, odd rounds add F(round, B) to A, modulo their
// widths. F is the first little-endian 32-bit word of AES-256 of a block holding the input
// (little-endian), the round, w, the scheme's tag and the domain's largest index. A result outside
// the domain is permuted again (cycle-walking). Safe for concurrent use.
type Permutation struct {
	scheme string
	first  uint64
	size   uint64
	w      uint
	u, v   uint
	rounds int
	tag    byte
	block  cipher.Block
	once   sync.Once
	tables [][]uint32
}

// NewPermutation builds the permutation of the domain (startAfter, maxId] from a 32-byte key under
// a scheme of PermutationSchemes; it fails with CodeOpaqueID for anything else.
func NewPermutation(key []byte, startAfter, maxID uint64, scheme string) (*Permutation, error) {
	s, err := permutationScheme(scheme)
	if err != nil {
		return nil, err
	}
	if len(key) != KeyBytes {
		return nil, newError(CodeOpaqueID, fmt.Sprintf("an opaque sequence key has %d bytes; got %d", KeyBytes, len(key)))
	}
	if maxID <= startAfter {
		return nil, newError(CodeOpaqueID, fmt.Sprintf("no ID domain between startAfter=%d and maxId=%d", startAfter, maxID))
	}
	p := &Permutation{scheme: scheme, first: startAfter + 1, size: maxID - startAfter, rounds: s.Rounds, tag: byte(s.Tag)}
	p.w = uint(bits.Len64(p.size - 1))
	if p.w < 2 {
		p.w = 2
	}
	p.u = p.w >> 1
	p.v = p.w - p.u
	if p.block, err = aes.NewCipher(key); err != nil {
		return nil, newError(CodeOpaqueID, err.Error())
	}
	return p, nil
}

// permutationFromText is NewPermutation for a domain as ticketd sends it (decimal strings).
func permutationFromText(key []byte, startAfter, maxID, scheme string) (*Permutation, error) {
	a, errA := strconv.ParseUint(startAfter, 10, 64)
	m, errM := strconv.ParseUint(maxID, 10, 64)
	if errA != nil || errM != nil {
		return nil, newError(CodeOpaqueID, fmt.Sprintf("no ID domain between startAfter=%s and maxId=%s (IDs are 0 to 2^64-1)", startAfter, maxID))
	}
	return NewPermutation(key, a, m, scheme)
}

// Scheme is the name of the permutation's scheme.
func (p *Permutation) Scheme() string { return p.scheme }

// StartAfter is the domain's lower bound (every ID is greater).
func (p *Permutation) StartAfter() uint64 { return p.first - 1 }

// MaxID is the domain's largest ID.
func (p *Permutation) MaxID() uint64 { return p.first - 1 + p.size }

func (p *Permutation) index(id uint64) (uint64, error) {
	if id < p.first || id-p.first >= p.size {
		return 0, newError(CodeOpaqueID, fmt.Sprintf("ID %d is outside the sequence's domain (%d, %d]", id, p.first-1, p.first-1+p.size))
	}
	return id - p.first, nil
}

// f is the round function: AES-256 of (x, round, w, tag, largest index), its first word.
func (p *Permutation) f(round int, x uint32) uint32 {
	var in, out [16]byte
	binary.LittleEndian.PutUint32(in[0:], x)
	in[4] = byte(round)
	in[5] = byte(p.w)
	in[6] = p.tag
	binary.LittleEndian.PutUint64(in[8:], p.size-1)
	p.block.Encrypt(out[:], in[:])
	return binary.LittleEndian.Uint32(out[0:])
}

// roundTables are F(round, x) for every x when both halves are small: lookups then give exactly F.
func (p *Permutation) roundTables() [][]uint32 {
	if p.v > tableBits {
		return nil
	}
	p.once.Do(func() {
		tables := make([][]uint32, p.rounds)
		for r := range tables {
			width := p.u
			if r&1 == 1 {
				width = p.v
			}
			table := make([]uint32, 1<<width)
			for x := range table {
				table[x] = p.f(r, uint32(x))
			}
			tables[r] = table
		}
		p.tables = tables
	})
	return p.tables
}

func (p *Permutation) roundF(tables [][]uint32, r int, x uint32) uint32 {
	if tables != nil {
		return tables[r][x]
	}
	return p.f(r, x)
}

// Encode is P(id): the opaque ID of an ordered one.
func (p *Permutation) Encode(id uint64) (uint64, error) {
	x, err := p.index(id)
	if err != nil || p.size == 1 {
		return id, err
	}
	tables := p.roundTables()
	maskV := uint32(1<<p.v - 1)
	maskU := uint32(1<<p.u - 1)
	for {
		a := uint32(x >> p.v)
		b := uint32(x) & maskV
		for r := 0; r < p.rounds; r += 2 {
			b = (b + p.roundF(tables, r, a)) & maskV
			a = (a + p.roundF(tables, r+1, b)) & maskU
		}
		x = uint64(a)<<p.v | uint64(b)
		if x < p.size {
			return p.first + x, nil
		}
	}
}

// Decode is P⁻¹(id): the ordered ID an opaque one stands for.
func (p *Permutation) Decode(id uint64) (uint64, error) {
	x, err := p.index(id)
	if err != nil || p.size == 1 {
		return id, err
	}
	tables := p.roundTables()
	maskV := uint32(1<<p.v - 1)
	maskU := uint32(1<<p.u - 1)
	for {
		a := uint32(x >> p.v)
		b := uint32(x) & maskV
		for r := p.rounds - 1; r > 0; r -= 2 {
			a = (a - p.roundF(tables, r, b)) & maskU
			b = (b - p.roundF(tables, r-1, a)) & maskV
		}
		x = uint64(a)<<p.v | uint64(b)
		if x < p.size {
			return p.first + x, nil
		}
	}
}

// EncodeRun is P of count consecutive ordered IDs from first, written into out (len(out) ≥ count).
func (p *Permutation) EncodeRun(first uint64, out []uint64) error {
	if len(out) == 0 {
		return nil
	}
	if _, err := p.index(first); err != nil {
		return err
	}
	if _, err := p.index(first + uint64(len(out)-1)); err != nil || first+uint64(len(out)-1) < first {
		if err == nil {
			err = newError(CodeOpaqueID, "a run past 2^64 - 1")
		}
		return err
	}
	for k := range out {
		v, err := p.Encode(first + uint64(k))
		if err != nil {
			return err
		}
		out[k] = v
	}
	return nil
}
