package benchcluster

import "sync"

// Parallel calls fn for 0..count-1 on workers goroutines and returns the
// first error; every call is made even after one fails, so a caller that
// creates objects knows they were all tried.
func Parallel(count, workers int, fn func(int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range count {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
