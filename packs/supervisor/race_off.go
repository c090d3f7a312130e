//go:build !race

package supervisor

// RaceEnv is added to a supervisor's environment in race-detector
// builds only (race_on.go).
const RaceEnv = ""
