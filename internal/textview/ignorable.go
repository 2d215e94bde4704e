package textview

// isIgnorable reports whether r is a Default_Ignorable_Code_Point
// (Unicode 15.0, DerivedCoreProperties.txt): invisible to a reader, so
// removed before matching. Written out as ranges because the standard
// library has only Other_Default_Ignorable_Code_Point; the test derives
// the property from the library's tables and compares.
func isIgnorable(r rune) bool {
	if r < 0x00AD {
		return false
	}
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C,
		0x115F <= r && r <= 0x1160,
		0x17B4 <= r && r <= 0x17B5,
		0x180B <= r && r <= 0x180F,
		0x200B <= r && r <= 0x200F,
		0x202A <= r && r <= 0x202E,
		0x2060 <= r && r <= 0x206F,
		r == 0x3164,
		0xFE00 <= r && r <= 0xFE0F,
		r == 0xFEFF, r == 0xFFA0,
		0xFFF0 <= r && r <= 0xFFF8,
		0x1BCA0 <= r && r <= 0x1BCA3,
		0x1D173 <= r && r <= 0x1D17A,
		0xE0000 <= r && r <= 0xE0FFF:
		return true
	}
	return false
}
