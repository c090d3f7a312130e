//go:build !race

package packs

// supervisorEnv is added to a supervisor's environment in race-detector
// builds only (race_on.go).
const supervisorEnv = ""
