//go:build race

package contain

// raceBuild: a re-executed race-detector binary is told not to sleep at
// exit (supervisor.RaceEnv).
const raceBuild = true
