//go:build !unix

package server

// raiseFDLimit: no open-file limit is known off Unix (0 = none).
func raiseFDLimit() (limit, from uint64, err error) { return 0, 0, nil }

// temporaryAcceptErr: off Unix only timeouts are retried (see acceptRetry).
func temporaryAcceptErr(error) bool { return false }
