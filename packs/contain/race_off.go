//go:build !race

package contain

const raceBuild = false
