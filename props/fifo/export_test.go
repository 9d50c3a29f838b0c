package fifo

// SetReachSubject hands the reach tests our FIFOs (see ours_test.go).
func SetReachSubject(f func(real bool) Subject) { reachSubject = f }
