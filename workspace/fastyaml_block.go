package workspace

import "go.yaml.in/yaml/v3"

// anchor is an anchor (&name) read before the node it names; the node
// takes its position, as in yaml.v3. The zero value is no anchor.
type anchor struct {
	name      string
	line, col int
}

// anchorHere reads the anchor at the cursor, if there is one, and the
// spaces after it.
func (p *fastParser) anchorHere() anchor {
	if p.at(p.pos) != '&' {
		return anchor{}
	}
	a := anchor{line: p.line, col: p.col(p.pos)}
	a.name = p.anchorName()
	if c := p.at(p.pos); c != ' ' && c != '\n' && c != 0 {
		bail()
	}
	p.skipSpaces()
	return a
}

// anchorName scans the name after '&' or '*' (letters, digits, '_', '-').
func (p *fastParser) anchorName() string {
	p.pos++
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' || c == '-') {
			break
		}
		p.pos++
	}
	if p.pos == start {
		bail()
	}
	return p.src[start:p.pos]
}

// anchored gives n the anchor a (if any) and its position, and records it
// for later aliases. Collections are anchored before their children are
// read, so an alias inside its own anchor refers to it, as in yaml.v3.
func (p *fastParser) anchored(n *yaml.Node, a anchor) *yaml.Node {
	if a.name != "" {
		n.Anchor, n.Line, n.Column = a.name, a.line, a.col
		if p.anchors == nil {
			p.anchors = map[string]*yaml.Node{}
		}
		p.anchors[a.name] = n
	}
	return n
}

// alias reads an alias (*name) of an anchor already read.
func (p *fastParser) alias(flow bool) *yaml.Node {
	line, col := p.line, p.col(p.pos)
	name := p.anchorName()
	if c := p.at(p.pos); !(c == ' ' || c == '\n' || c == 0 || flow && (c == ',' || c == ']' || c == '}')) {
		bail()
	}
	target := p.anchors[name]
	if target == nil {
		bail() // yaml.v3 reports the unknown anchor
	}
	n := p.node(yaml.AliasNode, "", name, line, col)
	n.Alias = target
	return n
}

// blockNode parses the node starting at the cursor, in block context;
// parent is the indentation of the enclosing block collection and a an
// anchor read before it. Only spaces, "- " and that anchor precede the
// cursor on its line.
func (p *fastParser) blockNode(parent int, a anchor) *yaml.Node {
	p.enter()
	defer p.leave()
	col := p.pos - p.lineStart
	if col <= parent {
		bail()
	}
	// An anchor on the line of a key names the key (left to yaml.v3); one
	// on an earlier line names the collection that follows.
	sameLine := a.name != "" && a.line == p.line
	switch c := p.src[p.pos]; {
	case c == '-' && p.blankz(p.pos+1):
		if sameLine {
			bail()
		}
		return p.blockSeq(col, false, a)
	case c == '[' || c == '{':
		n := p.flow(a)
		p.finishLine()
		return n
	case c == '|' || c == '>':
		return p.blockScalar(parent, a)
	}
	key := p.scalar(false)
	p.skipSpaces()
	if p.at(p.pos) == ':' && p.blankz(p.pos+1) {
		if sameLine {
			bail()
		}
		return p.blockMap(col, key, a)
	}
	p.finishLine()
	return p.anchored(key, a)
}

// keyEnd checks that the implicit key starting at start ends at the cursor
// with ": " (or ':' at the end of the line).
func (p *fastParser) keyEnd(start int) {
	if p.at(p.pos) != ':' || !p.blankz(p.pos+1) || p.pos-start > fastMaxKey {
		bail()
	}
}

// blockMap parses a block mapping at indentation n whose first key has
// been read; the cursor is on that key's ':'.
func (p *fastParser) blockMap(n int, key *yaml.Node, a anchor) *yaml.Node {
	m := p.anchored(p.node(yaml.MappingNode, "!!map", "", key.Line, key.Column), a)
	mark := len(p.stack)
	keyStart := p.lineStart + n
	for {
		p.keyEnd(keyStart)
		line, col := p.line, p.col(p.pos)
		p.pos++
		p.stack = append(p.stack, key)
		p.skipSpaces()
		var val *yaml.Node
		if p.atLineEnd() {
			p.finishLine()
			switch {
			case p.ind > n:
				val = p.blockNode(n, anchor{})
			case p.ind == n && p.isSeqEntry():
				val = p.blockSeq(n, true, anchor{})
			default:
				// An empty value sits just after its ':', as in yaml.v3.
				val = p.node(yaml.ScalarNode, "!!null", "", line, col+1)
			}
		} else {
			val = p.inlineValue(n)
		}
		p.stack = append(p.stack, val)
		if p.ind > n || p.ind == n && p.isSeqEntry() {
			bail()
		}
		if p.ind < n {
			break
		}
		keyStart = p.pos
		key = p.scalar(false)
		p.skipSpaces()
	}
	m.Content = p.children(mark)
	return m
}

// inlineValue parses the value written on the line of a key of the block
// mapping at indentation parent (with an anchor, it may start on the next
// line).
func (p *fastParser) inlineValue(parent int) *yaml.Node {
	a := p.anchorHere()
	if a.name != "" && p.atLineEnd() {
		p.finishLine()
		switch {
		case p.ind > parent:
			return p.blockNode(parent, a)
		case p.ind == parent && p.isSeqEntry():
			return p.blockSeq(parent, true, a)
		}
		bail() // an anchored empty value
	}
	var n *yaml.Node
	switch c := p.src[p.pos]; {
	case c == '*' && a.name == "":
		n = p.alias(false)
	case c == '[' || c == '{':
		n = p.flow(a)
	case c == '|' || c == '>':
		return p.blockScalar(parent, a)
	case c == '-' && p.blankz(p.pos+1):
		bail()
	default:
		n = p.anchored(p.scalar(false), a)
	}
	p.finishLine()
	return n
}

// blockSeq parses a block sequence whose entries ("- ") stand at
// indentation n; indentless is set for one written at its key's
// indentation, which ends at the first line that is not an entry.
func (p *fastParser) blockSeq(n int, indentless bool, a anchor) *yaml.Node {
	s := p.anchored(p.node(yaml.SequenceNode, "!!seq", "", p.line, p.col(p.pos)), a)
	mark := len(p.stack)
	for {
		line, col := p.line, p.col(p.pos)
		p.pos++
		p.skipSpaces()
		ia := p.anchorHere()
		var item *yaml.Node
		switch {
		case p.at(p.pos) == '*' && ia.name == "":
			item = p.alias(false)
			p.finishLine()
		case p.atLineEnd():
			p.finishLine()
			switch {
			case p.ind > n:
				item = p.blockNode(n, ia)
			case ia.name != "":
				bail() // an anchored empty item
			default:
				item = p.node(yaml.ScalarNode, "!!null", "", line, col+1)
			}
		default:
			item = p.blockNode(n, ia)
		}
		p.stack = append(p.stack, item)
		if p.ind > n {
			bail()
		}
		if p.ind < n {
			break
		}
		if !p.isSeqEntry() {
			if indentless {
				break
			}
			bail()
		}
	}
	s.Content = p.children(mark)
	return s
}

// flow parses a flow collection that opens at the cursor. It may span
// lines; each key stays on one line with its ':'.
func (p *fastParser) flow(a anchor) *yaml.Node {
	p.enter()
	defer p.leave()
	isMap := p.src[p.pos] == '{'
	kind, tag, closing := yaml.SequenceNode, "!!seq", byte(']')
	if isMap {
		kind, tag, closing = yaml.MappingNode, "!!map", '}'
	}
	n := p.anchored(p.node(kind, tag, "", p.line, p.col(p.pos)), a)
	n.Style = yaml.FlowStyle
	p.pos++
	mark := len(p.stack)
	p.flowSpace()
	if p.at(p.pos) == closing {
		p.pos++
		return n
	}
	for {
		if isMap {
			start := p.pos
			k := p.flowValue()
			if k.Kind != yaml.ScalarNode || k.Anchor != "" {
				bail()
			}
			p.skipSpaces()
			if p.at(p.pos) != ':' || p.pos-start > fastMaxKey {
				bail()
			}
			p.pos++
			p.flowSpace()
			p.stack = append(p.stack, k)
		}
		p.stack = append(p.stack, p.flowValue())
		p.flowSpace()
		switch p.at(p.pos) {
		case ',':
			p.pos++
			p.flowSpace()
			if p.at(p.pos) == closing {
				bail() // a trailing comma
			}
			continue
		case closing:
			p.pos++
			n.Content = p.children(mark)
			return n
		}
		bail()
	}
}

// flowSpace skips spaces, line breaks and comments inside a flow
// collection.
func (p *fastParser) flowSpace() {
	for {
		p.skipSpaces()
		switch p.at(p.pos) {
		case '#':
			if p.pos > p.lineStart && p.src[p.pos-1] != ' ' {
				bail()
			}
			p.skipComment()
			continue
		case '\n':
			p.newline()
			if p.atDocumentMarker() {
				bail()
			}
			continue
		}
		return
	}
}

// flowValue parses one entry of a flow collection.
func (p *fastParser) flowValue() *yaml.Node {
	a := p.anchorHere()
	switch c := p.at(p.pos); {
	case c == '*' && a.name == "":
		return p.alias(true)
	case c == '[' || c == '{':
		return p.flow(a)
	case c == ',' || c == ']' || c == '}' || c == '\n' || c == 0:
		bail() // an anchored empty value
	}
	return p.anchored(p.scalar(true), a)
}
