package workspace

import "reflect"

// A workspace that loaded with errors is returned with them (see Load) so
// that `toolgate check` can run the checks that come after loading —
// requires, grants — and list every problem at once. Those checks must not
// report what is only a consequence of a load error (a grant naming a pack
// whose declaration failed), so the loader marks where its errors are:
//
//   - Damaged on each declaration (server, pack, command, requirement,
//     agent, grant, approval rule) holding an error, at any depth;
//   - CommandPack.UnreadCommands and Workspace.Unread when a declaration
//     could not be read far enough to know its id, or a whole list of them
//     was lost (not a list, under a misspelt or repeated key).
//
// A workspace that loaded cleanly has none of these set.

// declMark is one declaration being decoded: v is the struct, flag indexes
// its Damaged field, and depth is len(decoder.path) when it started.
type declMark struct {
	v     reflect.Value
	flag  []int
	depth int
}

var commandPackType = reflect.TypeFor[CommandPack]()

// damage records the error just appended: every declaration being decoded
// is damaged, and the names it may have hidden are unread.
func (d *decoder) damage() {
	for _, m := range d.decls {
		m.v.FieldByIndex(m.flag).SetBool(true)
	}
	if len(d.decls) == 0 {
		d.unreadAt(d.path)
		return
	}
	inner := d.decls[len(d.decls)-1]
	if inner.v.Type() == commandPackType && len(d.path) > inner.depth && d.path[inner.depth].key == "commands" {
		// In the pack's commands list but in no command: an entry that is
		// not a mapping, or the list itself.
		inner.v.Addr().Interface().(*CommandPack).UnreadCommands = true
	}
}

// unreadAt marks the names an error outside every declaration, at path,
// may have hidden: at the top of the file (an unknown or repeated key) any;
// in the surface or agent lists (an entry that is not a mapping, or the
// list itself) those.
func (d *decoder) unreadAt(path []pathElem) {
	if d.unread == nil || len(path) == 0 {
		return
	}
	section := ""
	if len(path) > 1 {
		section = path[1].key
	}
	switch section {
	case "":
		d.unread.Surfaces, d.unread.Agents = true, true
	case "mcp_servers", "command_packs":
		d.unread.Surfaces = true
	case "agents":
		d.unread.Agents = true
	}
}
