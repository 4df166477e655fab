//go:build !race

package load_test

const raceSlack = 0
