package persist

// BufferBytes returns the capacity of the log's in-memory buffers (the
// one commands are appended to and the spare kept for reuse): memory the
// server holds for the log besides the file. It takes the log's lock;
// call it from diagnostics or a periodic sampler, not per command.
func (l *Log) BufferBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(cap(l.buf) + cap(l.spare))
}
