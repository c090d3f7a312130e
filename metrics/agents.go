package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// OtherAgent is the agent label of a decision whose agent is not declared
// (none should be: the gateway admits only declared agents). No name a
// request carries ever becomes a label.
const OtherAgent = "_other"

// agentSeries are the pre-resolved decision counters of one agent, by
// surface (declared surfaces, and OtherSurface).
type agentSeries struct {
	bySurface map[string]*[numOutcomes]prometheus.Counter
	other     *[numOutcomes]prometheus.Counter
}

// agentTable is the immutable set of agents' series in force.
type agentTable struct {
	agents map[string]*agentSeries
	other  *agentSeries
}

func (m *Metrics) agentCounters(agent, surface string) *[numOutcomes]prometheus.Counter {
	var c [numOutcomes]prometheus.Counter
	for o := range numOutcomes {
		c[o] = m.agentDecisions.WithLabelValues(agent, surface, o.String())
	}
	return &c
}

// declareAgents builds the agents' series for the declared agents and
// surfaces, keeping the counters that exist, and deletes those of names
// no longer declared. Called with m.mu held.
func (m *Metrics) declareAgents(agents, surfaces []string) {
	old := m.agents.Load()
	build := func(agent string, prev *agentSeries) *agentSeries {
		s := &agentSeries{bySurface: make(map[string]*[numOutcomes]prometheus.Counter, len(surfaces))}
		for _, sf := range surfaces {
			if prev != nil && prev.bySurface[sf] != nil {
				s.bySurface[sf] = prev.bySurface[sf]
			} else {
				s.bySurface[sf] = m.agentCounters(agent, sf)
			}
		}
		if prev != nil {
			s.other = prev.other
		} else {
			s.other = m.agentCounters(agent, OtherSurface)
		}
		return s
	}
	next := &agentTable{agents: make(map[string]*agentSeries, len(agents))}
	var prevOther *agentSeries
	if old != nil {
		prevOther = old.other
	}
	next.other = build(OtherAgent, prevOther)
	for _, a := range agents {
		if a == OtherAgent {
			continue
		}
		var prev *agentSeries
		if old != nil {
			prev = old.agents[a]
		}
		next.agents[a] = build(a, prev)
	}
	if old != nil {
		keepSurface := map[string]bool{OtherSurface: true}
		for _, sf := range surfaces {
			keepSurface[sf] = true
		}
		for a, s := range old.agents {
			if _, ok := next.agents[a]; !ok {
				m.agentDecisions.DeletePartialMatch(prometheus.Labels{"agent": a})
				continue
			}
			for sf := range s.bySurface {
				if !keepSurface[sf] {
					m.agentDecisions.DeletePartialMatch(prometheus.Labels{"agent": a, "surface": sf})
				}
			}
		}
		for sf := range old.other.bySurface {
			if !keepSurface[sf] {
				m.agentDecisions.DeletePartialMatch(prometheus.Labels{"agent": OtherAgent, "surface": sf})
			}
		}
	}
	m.agents.Store(next)
}

// AgentDecision counts one decision of agent on surface: both must be
// declared to be named, else they count under OtherAgent/OtherSurface.
// Lock-free: one load and two map lookups.
func (m *Metrics) AgentDecision(agent, surface string, o Outcome) {
	t := m.agents.Load()
	if t == nil {
		return
	}
	a, ok := t.agents[agent]
	if !ok {
		a = t.other
	}
	c, ok := a.bySurface[surface]
	if !ok {
		c = a.other
	}
	c[clamp(o)].Inc()
}

// RefusedOther is the reason label of a refusal outside the fixed set.
const RefusedOther = "other"

// refusedReasons is the fixed set of the reason label: identity's
// Refused* and JWT Reason values.
var refusedReasons = map[string]bool{
	"no_token": true, "unknown_token": true, RefusedOther: true,
	"malformed": true, "algorithm": true, "unknown_key": true, "signature": true, "keys": true, "issuer": true,
	"audience": true, "expired": true, "not_yet_valid": true, "agent_claim": true, "unknown_agent": true,
}

// Endpoints of the refused-token counter.
const (
	EndpointMCP   = "mcp"
	EndpointAdmin = "admin"
)

// TokenRefused counts one request refused for its credentials at
// endpoint (EndpointMCP or EndpointAdmin), with a reason from the fixed
// set (anything else counts as RefusedOther).
func (m *Metrics) TokenRefused(endpoint, reason string) {
	if endpoint != EndpointAdmin {
		endpoint = EndpointMCP
	}
	if !refusedReasons[reason] {
		reason = RefusedOther
	}
	m.refused.WithLabelValues(endpoint, reason).Inc()
}
