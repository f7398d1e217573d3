package tiktoken

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/tiktoken-go/tokenizer"
)

// ranks maps the tokens of an encoding to their ranks (ids), the order in
// which byte-pair encoding merges them. It is an open-addressing table
// over one string that holds every token, so that a lookup hashes a
// substring of the text without building a string and the whole table
// takes about 5 MB for o200k_base, less than the Go map the codec keeps.
type ranks struct {
	seed  maphash.Seed
	mask  uint64
	slots []uint32 // rank+1 of the token hashed there; 0: empty
	data  string   // every token, in rank order
	off   []uint32 // token r is data[off[r]:off[r+1]]
}

// newRanks reads the size tokens of codec, ranks 0 to size-1, through its
// Decode (the codec does not export its vocabulary). Ranks of both
// encodings are dense; a rank that does not decode is an error.
func newRanks(codec tokenizer.Codec, size int) (*ranks, error) {
	t := &ranks{seed: maphash.MakeSeed(), off: make([]uint32, size+1)}
	buf := make([]byte, 0, 8*size)
	id := make([]uint, 1)
	for r := range size {
		id[0] = uint(r)
		tok, err := codec.Decode(id)
		if err != nil || tok == "" {
			return nil, fmt.Errorf("token %d does not decode: %v", r, err)
		}
		buf = append(buf, tok...)
		t.off[r+1] = uint32(len(buf))
	}
	t.data = string(buf)
	n := 1
	for n < 2*size {
		n <<= 1
	}
	t.mask = uint64(n - 1)
	t.slots = make([]uint32, n)
	for r := range size {
		tok := t.token(r)
		i := maphash.String(t.seed, tok) & t.mask
		for t.slots[i] != 0 {
			if t.token(int(t.slots[i]-1)) == tok {
				return nil, fmt.Errorf("tokens %d and %d are both %q", t.slots[i]-1, r, tok)
			}
			i = (i + 1) & t.mask
		}
		t.slots[i] = uint32(r + 1)
	}
	return t, nil
}

// token returns the bytes of rank r.
func (t *ranks) token(r int) string { return t.data[t.off[r]:t.off[r+1]] }

// noRank is the rank of a byte sequence that is no token.
const noRank = math.MaxUint32

// rank returns the rank of the token s, or noRank.
func (t *ranks) rank(s string) uint32 {
	i := maphash.String(t.seed, s) & t.mask
	for {
		v := t.slots[i]
		if v == 0 {
			return noRank
		}
		if t.token(int(v-1)) == s {
			return v - 1
		}
		i = (i + 1) & t.mask
	}
}

// scanMax is the longest piece merged with a linear scan per merge; a
// longer one (rare: a long word, a base64 run) uses a heap. The codec
// switches at the same length, and both give the same parts.
const scanMax = 96

// count returns the number of tokens byte-pair encoding makes of piece:
// repeatedly merge the leftmost adjacent pair of parts whose union has
// the lowest rank, starting from single bytes, until no union is a token.
func (t *ranks) count(piece string) int {
	if t.rank(piece) != noRank {
		return 1
	}
	if len(piece) >= scanMax {
		return t.countHeap(piece)
	}
	// parts[k] is the start of part k and the rank of its union with
	// part k+1; parts[len-1] is the end.
	type part struct {
		start int
		rank  uint32
	}
	var buf [scanMax + 1]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	// union is the rank of parts k and k+1 (k+skip+1 in the list) merged.
	union := func(k, skip int) uint32 {
		if k+skip+2 < len(parts) {
			return t.rank(piece[parts[k].start:parts[k+skip+2].start])
		}
		return noRank
	}
	for k := 0; k+2 < len(parts); k++ {
		parts[k].rank = union(k, 0)
	}
	for len(parts) > 1 {
		best, at := uint32(noRank), 0
		for k, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, k
			}
		}
		if best == noRank {
			break
		}
		parts[at].rank = union(at, 1)
		if at > 0 {
			parts[at-1].rank = union(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// countHeap is count for a long piece: a list of parts and a heap of the
// merges they offer, ordered by rank then start, so that a merge costs
// O(log n) instead of a scan.
func (t *ranks) countHeap(piece string) int {
	n := int32(len(piece))
	type node struct {
		prev, next int32
		rank       uint32
	}
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	union := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		return t.rank(piece[i:k])
	}
	h := make(mergeHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := union(i); r != noRank {
			nodes[i].rank = r
			h = append(h, merge{r, i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.start
		if nodes[i].rank != top.rank {
			continue // stale: part i changed since this merge was offered
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = union(b)
			if nodes[b].rank != noRank {
				h.push(merge{nodes[b].rank, b})
			}
		}
	}
	return parts
}

// merge is a merge a part offers with the part after it.
type merge struct {
	rank  uint32
	start int32
}

// mergeHeap is a min-heap of merges by rank, then start, so that among
// equal ranks the leftmost pair merges first.
type mergeHeap []merge

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].start < h[b].start
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(m merge) {
	*h = append(*h, m)
	h.up(len(*h) - 1)
}

func (h *mergeHeap) pop() merge {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h mergeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
