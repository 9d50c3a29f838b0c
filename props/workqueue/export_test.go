package workqueue

// SetReachSubject hands the reach tests our queues (see ours_test.go).
func SetReachSubject(s func() Subject) { reachSubject = s }
