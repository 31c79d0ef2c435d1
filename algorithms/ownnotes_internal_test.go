package algorithms

import "testing"

// TestOwnNotesYieldToAnotherGiveBack: within one GiveBack call, a check
// is lowered by its key's note as it stood before the call while the note
// is still the one the call wrote; once another give-back (another Take's,
// between two of the call's checks: the MemoryStore does not hold its
// lock across the call) wrote over it, by the note as it stands, which
// counts that give-back too. A call of one check records nothing.
func TestOwnNotesYieldToAnotherGiveBack(t *testing.T) {
	tb := &table{}
	pre := bucketNote{g: 5, gam: u128{lo: 7}}
	mine := bucketNote{g: 10, gam: u128{lo: 3}}
	other := bucketNote{g: 10, gam: u128{lo: 9}}
	var own ownNotes
	own.wrote(tb, 1, pre, true, mine)
	if got, live := own.lowering(tb, 1, mine, true); got != pre || !live {
		t.Errorf("the call's own note: lowered by %+v (live %v), want the one before the call %+v", got, live, pre)
	}
	if got, live := own.lowering(tb, 2, mine, true); got != mine || !live {
		t.Errorf("another key: lowered by %+v (live %v), want its own %+v", got, live, mine)
	}
	if got, _ := own.lowering(tb, 1, other, true); got != other {
		t.Errorf("a note another give-back wrote over the call's: lowered by %+v, want it as it stands %+v", got, other)
	}
	// The call gives back again on top of the other give-back's note:
	// that note is now the one before.
	mine2 := bucketNote{g: 10, gam: u128{lo: 12}}
	own.wrote(tb, 1, other, true, mine2)
	if got, _ := own.lowering(tb, 1, mine2, true); got != other {
		t.Errorf("after writing over another give-back's note: lowered by %+v, want that note %+v", got, other)
	}
	var none *ownNotes
	none.wrote(tb, 1, pre, true, mine)
	if got, _ := none.lowering(tb, 1, mine, true); got != mine {
		t.Errorf("a call of one check: lowered by %+v, want the note as it stands %+v", got, mine)
	}
}
