package wire

// How the Conn's reading goroutine hands lines on: in batches of the lines already arrived,
// bounded in lines and bytes, with a few batches queued for the consumer.
const (
	maxBatchLines = 1024
	maxBatchBytes = 64 << 10
	batchQueue    = 4
	// chunkSize is the block short lines are copied into, so that a flood of them costs one
	// allocation per block instead of one per line. A line of more than chunkSize/8 gets a
	// block of its own.
	chunkSize = 64 << 10
)

// lineBufferer is a link that can tell whether a whole line is already buffered, so that
// reading it does not wait.
type lineBufferer interface{ hasLine() bool }

// lineKeeper is a link that can tell whether the line it read last stays as it is, never
// written again, so that it is handed on without a copy.
type lineKeeper interface{ kept() bool }

// batcher collects lines into a batch. Their bytes are copied into shared blocks; a block is
// never written again where a line handed on points into it.
type batcher struct {
	lines []Line
	bytes int
	chunk []byte
	free  <-chan []Line // batches given back, empty, of maxBatchLines lines
}

func (b *batcher) empty() bool { return len(b.lines) == 0 }

func (b *batcher) full() bool { return len(b.lines) >= maxBatchLines || b.bytes >= maxBatchBytes }

// add copies ln (whose Raw is the reader's buffer) into the batch, unless kept says the
// reader never writes that buffer again. more says whether further lines are waiting, to
// size a new batch.
func (b *batcher) add(ln Line, kept bool, more func() bool) {
	n := len(ln.Raw)
	if kept {
		ln.Raw = ln.Raw[:n:n] // an append to it must not write over the next line
	} else if n > chunkSize/8 {
		ln = ln.Clone()
	} else {
		if cap(b.chunk)-len(b.chunk) < n {
			b.chunk = make([]byte, 0, chunkSize)
		}
		i := len(b.chunk)
		b.chunk = append(b.chunk, ln.Raw...)
		ln.Raw = b.chunk[i:len(b.chunk):len(b.chunk)]
	}
	if b.lines == nil {
		if !more() {
			b.lines = make([]Line, 0, 1)
		} else {
			select {
			case b.lines = <-b.free:
			default:
				b.lines = make([]Line, 0, maxBatchLines)
			}
		}
	}
	b.lines = append(b.lines, ln)
	b.bytes += n
}

// take returns the batch and starts a new one.
func (b *batcher) take() []Line {
	l := b.lines
	b.lines, b.bytes = nil, 0
	return l
}
