package main

import (
	"fmt"
	"sort"
	"strings"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

// The restoration is injected by several SessionStart(compact) commands, each printing one part:
// Claude Code inlines each hook's text up to 10,000 characters, and joins the parts in the order
// the commands finish. So each part holds whole attachments (never one cut), starts with a header
// that reads right alone, and is at most PartChars UTF-16 units (JavaScript's string length,
// which is what Claude Code counts).

// Item is one attachment as a part shows it: its blocks joined by "\n".
type Item struct {
	Rank   int // its position in the daemon's answer
	Path   string
	Text   string
	Units  int   // UTF-16 units of Text
	Tokens int64 // the attachment's rough tokens (what the file budget charged)
}

// Plan is the restoration laid out in parts: Kept is the attachments that fit, in the daemon's
// order (always a prefix of it, so that a file budget of KeptTokens makes the daemon commit
// exactly those), Dropped the rest, Parts[i] the items of part i+1.
type Plan struct {
	Parts      [][]Item
	Kept       []Item
	Dropped    []Item
	KeptTokens int64
	header     func(k, n int) string // what opens each part (nil: Claude Code's)
}

// Layout is how a harness takes the parts: how many, the most each may hold (in Measure's unit,
// which Item.Units is in) and the header opening each.
type Layout struct {
	Parts   int
	Max     int
	Measure func(string) int
	Header  func(k, n int) string
}

// Units is a string's length in UTF-16 code units.
func Units(s string) int {
	n := 0
	for _, r := range s { // invalid UTF-8 comes as U+FFFD: one unit, as it is sent
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// header opens part k of n: it says what the text is, on its own, whatever the order.
func header(k, n int) string {
	return fmt.Sprintf("postcompact re-read these files from disk after the conversation was summarized: "+
		"ones it used that Claude Code did not restore itself (part %d of %d; the parts may come in any order).", k, n)
}

const itemSep = "\n\n"

// Items are the file attachments of a compaction's answer (complement mode attaches nothing
// else; anything else is Claude Code's own and left out).
func Items(atts []*pb.Attachment) []Item {
	var items []Item
	for i, a := range atts {
		k := a.GetKind()
		if k != pb.AttachmentKind_ATTACHMENT_KIND_FILE && k != pb.AttachmentKind_ATTACHMENT_KIND_COMPACT_FILE_REFERENCE {
			continue
		}
		path := a.GetFile().GetPath()
		if path == "" {
			path = a.GetFileReference().GetPath()
		}
		text := strings.Join(a.GetBlocks(), "\n")
		items = append(items, Item{Rank: i, Path: path, Text: text, Units: Units(text), Tokens: a.GetTokens()})
	}
	return items
}

// Pack lays items out in n parts of at most max units each: the longest prefix of them that
// first-fit-decreasing places (every item that fits a part alone, of a total at most two parts'
// worth, is placed in three: a budget of (n-1) parts is never dropped from); the rest dropped.
func Pack(items []Item, n, max int) Plan {
	return PackLayout(items, Layout{Parts: n, Max: max, Measure: Units, Header: header})
}

// PackLayout is Pack for a harness's layout (items measured in its unit).
func PackLayout(items []Item, l Layout) Plan {
	n := l.Parts
	for k := len(items); k >= 0; k-- {
		if parts, ok := firstFitDecreasing(items[:k], l); ok {
			p := Plan{Parts: parts, Kept: items[:k:k], Dropped: items[k:], header: l.Header}
			for _, it := range p.Kept {
				p.KeptTokens += it.Tokens
			}
			return p
		}
	}
	return Plan{Parts: make([][]Item, n), Dropped: items, header: l.Header}
}

func firstFitDecreasing(items []Item, l Layout) ([][]Item, bool) {
	n, max := l.Parts, l.Max
	order := append([]Item(nil), items...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Units > order[j].Units })
	parts := make([][]Item, n)
	used := make([]int, n)
	for k := range n {
		used[k] = l.Measure(l.Header(k+1, n))
	}
	for _, it := range order {
		placed := false
		for k := range n {
			if used[k]+len(itemSep)+it.Units <= max {
				parts[k] = append(parts[k], it)
				used[k] += len(itemSep) + it.Units
				placed = true
				break
			}
		}
		if !placed {
			return nil, false
		}
	}
	for k := range parts { // each part in the daemon's order
		sort.Slice(parts[k], func(i, j int) bool { return parts[k][i].Rank < parts[k][j].Rank })
	}
	return parts, true
}

// Text is part k's text (1-based), "" when it holds nothing.
func (p Plan) Text(k int) string {
	if k < 1 || k > len(p.Parts) || len(p.Parts[k-1]) == 0 {
		return ""
	}
	head := p.header
	if head == nil {
		head = header
	}
	var b strings.Builder
	b.WriteString(head(k, len(p.Parts)))
	for _, it := range p.Parts[k-1] {
		b.WriteString(itemSep)
		b.WriteString(it.Text)
	}
	return b.String()
}
