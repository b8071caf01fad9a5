package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

func item(rank, units int) Item {
	return Item{Rank: rank, Path: string(rune('a' + rank)), Text: strings.Repeat("x", units), Units: units, Tokens: int64((units + 2) / 4)}
}

// The budget guarantees a fit: a file of at most PartTokens fits a part alone with its header,
// and the files of a Budget fit Parts parts.
func TestBudgetFitsTheParts(t *testing.T) {
	maxItem := 4*PartTokens + 2 // rough tokens round UTF-16 units / 4 half up
	for k := 1; k <= Parts; k++ {
		if got := Units(header(k, Parts)) + len(itemSep) + maxItem; got > PartChars {
			t.Fatalf("part %d: header and the largest file take %d > %d units", k, got, PartChars)
		}
	}
	if PartChars > 10_000 {
		t.Fatalf("PartChars %d is over Claude Code's 10,000", PartChars)
	}
	// The default profile restores at most 20 files; each rounds its units by up to 2 and
	// takes a separator.
	const maxFiles = 20
	capacity := PartChars - Units(header(1, Parts))
	if worst := 4*Budget + maxFiles*(2+len(itemSep)); worst > (Parts-1)*capacity {
		t.Fatalf("a full budget takes up to %d units, over two parts' %d", worst, (Parts-1)*capacity)
	}
}

// First-fit-decreasing places any files of at most one part each, in all at most two parts'
// worth, into three parts (the argument in parts.go), on random sizes.
func TestPackNeverDropsWithinTheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	capacity := PartChars - Units(header(1, Parts)) // the units items may take in one part
	for trial := range 20_000 {
		var items []Item
		total := 0
		for i := 0; ; i++ {
			u := 1 + rng.IntN(capacity-len(itemSep))
			if rng.IntN(3) == 0 {
				u = 1 + rng.IntN(capacity/3)
			}
			if total+u+len(itemSep) > (Parts-1)*capacity {
				break
			}
			total += u + len(itemSep)
			items = append(items, item(i, u))
		}
		p := Pack(items, Parts, PartChars)
		if len(p.Dropped) != 0 {
			t.Fatalf("trial %d: %d of %d items dropped (total %d)", trial, len(p.Dropped), len(items), total)
		}
		for k := 1; k <= Parts; k++ {
			if n := Units(p.Text(k)); n > PartChars {
				t.Fatalf("trial %d: part %d has %d units", trial, k, n)
			}
		}
	}
}

// Over the budget, the parts keep the longest prefix that fits: whole items, in the daemon's
// order, never one cut, and KeptTokens is what they cost.
func TestPackDropsWholeItemsFromTheEnd(t *testing.T) {
	big := PartChars - Units(header(1, Parts)) - len(itemSep)
	items := []Item{item(0, big), item(1, big), item(2, big), item(3, 10), item(4, big)}
	p := Pack(items, Parts, PartChars)
	if len(p.Kept) != 3 || len(p.Dropped) != 2 || p.Dropped[0].Rank != 3 {
		t.Fatalf("kept %d, dropped %v", len(p.Kept), paths(p.Dropped))
	}
	if p.KeptTokens != items[0].Tokens+items[1].Tokens+items[2].Tokens {
		t.Fatalf("KeptTokens %d", p.KeptTokens)
	}
	seen := 0
	for k := 1; k <= Parts; k++ {
		text := p.Text(k)
		if Units(text) > PartChars {
			t.Fatalf("part %d: %d units", k, Units(text))
		}
		seen += strings.Count(text, strings.Repeat("x", big))
	}
	if seen != 3 {
		t.Fatalf("%d whole items in the parts, want 3", seen)
	}
}

// Each part reads on its own: its header names it, and its files keep the daemon's order.
func TestPartTextHeaderAndOrder(t *testing.T) {
	items := []Item{item(0, 3000), item(1, 5000), item(2, 4000), item(3, 2000)}
	p := Pack(items, Parts, PartChars)
	for k := 1; k <= Parts; k++ {
		text := p.Text(k)
		if text == "" {
			continue
		}
		if !strings.HasPrefix(text, header(k, Parts)+itemSep) {
			t.Fatalf("part %d does not open with its header: %.80q", k, text)
		}
		last := -1
		for _, it := range p.Parts[k-1] {
			if it.Rank < last {
				t.Fatalf("part %d out of order", k)
			}
			last = it.Rank
		}
	}
	if p.Text(0) != "" || p.Text(Parts+1) != "" {
		t.Fatal("a part outside 1..Parts has text")
	}
}

func TestUnitsCountsUTF16(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "😀": 2, "a\xffb": 3} {
		if got := Units(s); got != want {
			t.Errorf("Units(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestItemsKeepsFilesOnly(t *testing.T) {
	atts := []*pb.Attachment{
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_FILE, Tokens: 5, Blocks: []string{"call", "result"},
			Payload: &pb.Attachment_File{File: &pb.FileAttachment{Path: "/p/a"}}},
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_INVOKED_SKILLS, Blocks: []string{"skills"}},
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_COMPACT_FILE_REFERENCE, Blocks: []string{"note"},
			Payload: &pb.Attachment_FileReference{FileReference: &pb.CompactFileReference{Path: "/p/b"}}},
	}
	got := Items(atts)
	if len(got) != 2 || got[0].Path != "/p/a" || got[0].Text != "call\nresult" || got[1].Path != "/p/b" || got[1].Rank != 2 {
		t.Fatalf("Items = %+v", got)
	}
}
