package workspace

import (
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The fast path. go.yaml.in/yaml/v3 spends most of a large workspace's load
// time in its scanner (a port of libyaml: a token queue, simple-key
// bookkeeping and comment attachment for every character). Workspace files
// are written in a small part of YAML — block mappings and lists, one-line
// flow collections, one-line plain and quoted scalars, comments — so
// fastParse reads exactly that part, several times faster, into the same
// yaml.Node trees (kind, tag, value, style, line and column; comments are
// not kept, the decoder never reads them). On anything else it gives up and
// the caller parses the file with yaml.v3, which also reports every syntax
// error: the fast path only ever decides that a file is simple, never that
// it is wrong. FuzzFastParse checks that both parsers agree on every input
// the fast one accepts.

// fastMaxDepth bounds nesting on the fast path; deeper documents (legal up
// to the decoder's maxDepth) are parsed by yaml.v3.
const fastMaxDepth = 200

// fastMaxKey is the longest implicit key the fast path accepts, in bytes.
// yaml.v3 refuses a key whose ':' is more than 1024 characters past its
// start; bytes are at least characters, so below this both agree.
const fastMaxKey = 1000

// Values of fastParser.ind that are not an indentation.
const (
	indEnd    = -1
	indMarker = -2
)

// unsupported is the panic value that abandons the fast path.
type unsupported struct{}

func bail() { panic(unsupported{}) }

// fastParser is the state of one fast parse. After each node it parses,
// the cursor stands on the first character of the next line holding
// content (comments and blank lines skipped), ind being that line's
// indentation, or indEnd at the end of the input, or indMarker on a
// document marker; both end every block collection.
type fastParser struct {
	src       string
	pos       int
	line      int // 1-based line of pos
	lineStart int // offset of that line's first byte
	ind       int
	depth     int
	// Nodes and Content slices are carved from slabs, so a large document
	// costs a few hundred allocations rather than one per node.
	nodes []yaml.Node
	ptrs  []*yaml.Node
	chunk int
	// stack holds the children of the collections being parsed.
	stack []*yaml.Node
	// anchors are the anchors read so far, for aliases.
	anchors map[string]*yaml.Node
	// colLine, colPos and colChars remember the last column computed: on
	// the line starting at colLine, offset colPos is colChars characters in.
	colLine, colPos, colChars int
}

// fastParse parses data as one YAML document and returns its root node,
// or ok == false when data is outside the subset the fast path reads.
func fastParse(data []byte) (root *yaml.Node, ok bool) {
	if !fastChars(data) {
		return nil, false
	}
	p := &fastParser{src: string(data), line: 1, chunk: min(max(len(data)/16, 32), 8192)}
	defer func() {
		if r := recover(); r != nil {
			if _, giveUp := r.(unsupported); !giveUp {
				panic(r)
			}
			root, ok = nil, false
		}
	}()
	p.nextContentLine()
	if p.ind == indMarker && p.src[p.pos] == '-' {
		p.pos += 3 // "---" starting the document
		p.finishLine()
	}
	if p.ind < 0 {
		return nil, false // no document: yaml.v3 says what the file holds
	}
	root = p.blockNode(-1, anchor{})
	if p.ind == indMarker && p.src[p.pos] == '.' {
		p.pos += 3 // "..." ending it
		p.finishLine()
	}
	if p.ind != indEnd {
		bail() // another document
	}
	return root, true
}

// fastChars reports whether every character of data is one the fast path
// reads as yaml.v3 does: printable, with '\n' the only line break and no
// tab, carriage return, byte order mark or Unicode line separator.
func fastChars(data []byte) bool {
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			continue
		}
		if c < 0x80 {
			return false
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return false
		case r >= 0xA0 && r <= 0xD7FF && r != 0x2028 && r != 0x2029,
			r >= 0xE000 && r <= 0xFFFD && r != 0xFEFF,
			r >= 0x10000 && r <= utf8.MaxRune:
		default:
			return false
		}
		i += size - 1
	}
	return true
}

func (p *fastParser) enter() {
	if p.depth++; p.depth > fastMaxDepth {
		bail()
	}
}

func (p *fastParser) leave() { p.depth-- }

// at returns the byte at i, or 0 past the end (the fast path never sees a
// NUL in the input: fastChars refuses it).
func (p *fastParser) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// blankz reports whether the byte at i is a space, a line break or the end.
func (p *fastParser) blankz(i int) bool {
	c := p.at(i)
	return c == ' ' || c == '\n' || c == 0
}

// col is the 1-based column of offset i on the current line, in
// characters as yaml.v3 counts them. It counts on from the last column it
// gave on the line, so that a long line costs linear time.
func (p *fastParser) col(i int) int {
	if p.colLine != p.lineStart || i < p.colPos {
		p.colLine, p.colPos, p.colChars = p.lineStart, p.lineStart, 0
	}
	for _, c := range []byte(p.src[p.colPos:i]) {
		if c < 0x80 || c >= 0xC0 { // not a UTF-8 continuation byte
			p.colChars++
		}
	}
	p.colPos = i
	return p.colChars + 1
}

func (p *fastParser) skipSpaces() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// nextContentLine moves from the start of a line to the first character
// of the next line holding content, setting ind.
func (p *fastParser) nextContentLine() {
	for {
		start := p.pos
		p.skipSpaces()
		switch {
		case p.pos == len(p.src):
			p.ind = indEnd
			return
		case p.src[p.pos] == '\n':
		case p.src[p.pos] == '#':
			p.skipComment()
			if p.pos == len(p.src) {
				p.ind = indEnd
				return
			}
		default:
			p.ind = p.pos - start
			if p.ind == 0 && p.atDocumentMarker() {
				p.ind = indMarker
			}
			return
		}
		p.newline()
	}
}

// atDocumentMarker reports whether a document marker (--- or ...) starts
// at the cursor, which is at the start of a line.
func (p *fastParser) atDocumentMarker() bool {
	c := p.at(p.pos)
	return (c == '-' || c == '.') && p.at(p.pos+1) == c && p.at(p.pos+2) == c && p.blankz(p.pos+3)
}

// skipComment moves to the end of the line.
func (p *fastParser) skipComment() {
	for p.pos < len(p.src) && p.src[p.pos] != '\n' {
		p.pos++
	}
}

// newline steps over the '\n' at the cursor.
func (p *fastParser) newline() {
	p.pos++
	p.line++
	p.lineStart = p.pos
}

// atLineEnd reports whether nothing but a comment follows on this line.
func (p *fastParser) atLineEnd() bool {
	c := p.at(p.pos)
	return c == 0 || c == '\n' || c == '#' && p.src[p.pos-1] == ' '
}

// finishLine ends the line after a node (an optional comment, separated
// by a space, may follow) and moves to the next line holding content.
func (p *fastParser) finishLine() {
	p.skipSpaces()
	if p.at(p.pos) == '#' {
		if p.src[p.pos-1] != ' ' {
			bail()
		}
		p.skipComment()
	}
	switch p.at(p.pos) {
	case 0:
		p.ind = indEnd
		return
	case '\n':
		p.newline()
	default:
		bail()
	}
	p.nextContentLine()
}

func (p *fastParser) isSeqEntry() bool {
	return p.at(p.pos) == '-' && p.blankz(p.pos+1)
}

// node returns a fresh node at line and column col.
func (p *fastParser) node(kind yaml.Kind, tag, value string, line, col int) *yaml.Node {
	if len(p.nodes) == 0 {
		p.nodes = make([]yaml.Node, p.chunk)
	}
	n := &p.nodes[0]
	p.nodes = p.nodes[1:]
	n.Kind, n.Tag, n.Value, n.Line, n.Column = kind, tag, value, line, col
	return n
}

// children returns the nodes pushed since mark, as a Content slice of its
// own capacity, and pops them.
func (p *fastParser) children(mark int) []*yaml.Node {
	kids := p.stack[mark:]
	if len(kids) == 0 {
		return nil
	}
	if len(p.ptrs) < len(kids) {
		p.ptrs = make([]*yaml.Node, max(len(kids), p.chunk))
	}
	out := p.ptrs[:len(kids):len(kids)]
	p.ptrs = p.ptrs[len(kids):]
	copy(out, kids)
	clear(kids)
	p.stack = p.stack[:mark]
	return out
}
