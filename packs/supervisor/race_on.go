//go:build race

package supervisor

// RaceEnv is added to a supervisor's environment (and removed again
// before its command starts): a race-detector build sleeps a second at exit
// unless told not to, which would add a second to every call.
const RaceEnv = "GORACE=atexit_sleep_ms=0"
