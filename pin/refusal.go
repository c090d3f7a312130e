package pin

import "errors"

// Refusal is why surface's tool, whose live definition has digest live
// ("" when unknown or unpinnable), may not be served under l; nil when it
// may (or when l is nil: no lock, no pinning). The gateway refuses the
// call with it and `toolgate explain` shows it: one text for both.
func (l *Lock) Refusal(surface, tool string, live Digest) error {
	st := l.Check(surface, tool, live)
	if st == StatusPinned {
		return nil
	}
	const head = "tool definition changed since it was pinned: "
	const tail = "; it is hidden and refused until an operator reviews it and runs `toolgate pin --update`"
	name := "tool:" + surface + ":" + tool
	old, _ := l.Pinned(surface, tool)
	switch {
	case live == "":
		return errors.New(head + name + "'s live definition is not known or cannot be pinned (duplicate or case-variant keys)" + tail)
	case st == StatusNew:
		return errors.New(head + name + " was not pinned (it appeared after `toolgate pin`); its definition is " + string(live) + tail)
	}
	return errors.New(head + name + " was pinned at " + string(old) + ", its definition now is " + string(live) + tail)
}
