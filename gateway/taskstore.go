package gateway

import "github.com/toolgate/toolgate/state"

// taskStore is where tasks live: the deployment's shared store.
func (g *Gateway) taskStore() state.Tasks { return g.store }
