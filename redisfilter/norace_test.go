//go:build !race

package redisfilter_test

const raceDetector = false
