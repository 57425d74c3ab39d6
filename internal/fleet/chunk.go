package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// headroom is what is kept free in each message for its subject and headers.
const headroom = 4 << 10

// MaxLine is the longest event a reader puts back together: fr's line limit.
const MaxLine = 256 << 20

// Split cuts data into parts of at most max-headroom bytes (max is the server's maximum
// payload). One part is data itself.
func Split(data []byte, max int64) [][]byte {
	size := int(max) - headroom
	if size < 1024 {
		size = 1024
	}
	if len(data) <= size {
		return [][]byte{data}
	}
	parts := make([][]byte, 0, len(data)/size+1)
	for len(data) > size {
		parts = append(parts, data[:size])
		data = data[size:]
	}
	return append(parts, data)
}

// ChunkHeader is the Fr-Chunk value of part i (from 0) of n.
func ChunkHeader(i, n int) string { return strconv.Itoa(i+1) + "/" + strconv.Itoa(n) }

// parseChunk reads an Fr-Chunk value.
func parseChunk(v string) (i, n int, err error) {
	a, b, ok := strings.Cut(v, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || i < 1 || n < 2 || i > n || n > MaxLine/1024 {
		return 0, 0, fmt.Errorf("bad %s header %q", HeaderChunk, v)
	}
	return i, n, nil
}

// Joiner puts split events back together, for one reader. Parts of one event carry the same
// subject and Fr-Seq; parts of different events may interleave (two tasks of a pool).
type Joiner struct {
	parts map[string]*partial
	held  int
}

type partial struct {
	got  [][]byte
	have int
	size int
}

// Add takes one message and returns the whole event once every part of it has come (the
// message's own data when it is not a part); done is false while parts are missing.
func (j *Joiner) Add(m *nats.Msg) (data []byte, done bool, err error) {
	v := m.Header.Get(HeaderChunk)
	if v == "" {
		return m.Data, true, nil
	}
	i, n, err := parseChunk(v)
	if err != nil {
		return nil, false, err
	}
	if j.parts == nil {
		j.parts = map[string]*partial{}
	}
	key := m.Subject + " " + m.Header.Get(HeaderSeq)
	p := j.parts[key]
	if p == nil {
		p = &partial{got: make([][]byte, n)}
		j.parts[key] = p
	}
	if len(p.got) != n {
		delete(j.parts, key)
		j.held -= p.size
		return nil, false, fmt.Errorf("parts of one event disagree on their number (%d, then %d)", len(p.got), n)
	}
	if p.got[i-1] != nil {
		return nil, false, nil // a part seen before (a retried publish)
	}
	if j.held+len(m.Data) > MaxLine {
		return nil, false, fmt.Errorf("an event split in parts is longer than %d MiB", MaxLine>>20)
	}
	p.got[i-1] = append([]byte(nil), m.Data...)
	p.have++
	p.size += len(m.Data)
	j.held += len(m.Data)
	if p.have < n {
		return nil, false, nil
	}
	delete(j.parts, key)
	j.held -= p.size
	out := make([]byte, 0, p.size)
	for _, g := range p.got {
		out = append(out, g...)
	}
	return out, true, nil
}
