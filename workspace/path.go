package workspace

import "strconv"

// pathElem is one step from the document root to the value being decoded:
// a mapping key, or a list index when key is "".
type pathElem struct {
	key   string
	index int
}

func (d *decoder) push(key string) { d.path = append(d.path, pathElem{key: key}) }
func (d *decoder) pushIndex(i int) { d.path = append(d.path, pathElem{index: i}) }
func (d *decoder) pop()            { d.path = d.path[:len(d.path)-1] }

// where renders the path of the value being decoded, as
// workspace.command_packs[0].commands[2].argv, for error messages. It is
// built only when an error needs it, so decoding allocates no paths.
func (d *decoder) where() string {
	var b []byte
	for i, e := range d.path {
		switch {
		case e.key == "":
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.index), 10)
			b = append(b, ']')
		case i > 0:
			b = append(b, '.')
			fallthrough
		default:
			b = append(b, e.key...)
		}
	}
	return string(b)
}
