package fleet

// Split is the index-th of count shares of total by largest remainder:
// each share is total/count, and the first total%count shares one more,
// so the shares sum exactly to total and differ by at most one.
func Split(total int64, count, index int) int64 {
	if count <= 0 || index < 0 || index >= count {
		return 0
	}
	share := total / int64(count)
	if int64(index) < total%int64(count) {
		share++
	}
	return share
}
