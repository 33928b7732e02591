package ticketd

import (
	"fmt"
	"sort"
	"strings"
)

// PermutationScheme is how an opaque sequence's permutation is built: its rounds and the tag
// written into every AES block, so the round functions of two schemes never coincide.
type PermutationScheme struct {
	Rounds int
	Tag    int
}

// PermutationSchemes are the schemes this client knows, by the name stored with each key. A
// sequence's scheme never changes (its IDs would map to others); new ones only come for new sequences.
var PermutationSchemes = map[string]PermutationScheme{
	// ticketd 0.4: 8 Feistel rounds (FF3-1's count). Kept, exactly, for the sequences made with it.
	"feistel-aes256-v1": {Rounds: 8, Tag: 0},
	// From ticketd 0.5: 10 rounds, FF1's count.
	"feistel-aes256-v2": {Rounds: 10, Tag: 2},
}

const (
	// PermutationSchemeName is the scheme of sequences created from now on.
	PermutationSchemeName = "feistel-aes256-v2"
	// FirstPermutationScheme is ticketd 0.4's scheme, whose key GET .../id-key sends as "key" (later ones: "schemeKey").
	FirstPermutationScheme = "feistel-aes256-v1"
	// KeyBytes is the length of a sequence key.
	KeyBytes = 32
)

func permutationScheme(name string) (PermutationScheme, error) {
	if s, ok := PermutationSchemes[name]; ok {
		return s, nil
	}
	known := make([]string, 0, len(PermutationSchemes))
	for k := range PermutationSchemes {
		known = append(known, k)
	}
	sort.Strings(known)
	return PermutationScheme{}, newError(CodeOpaqueID, fmt.Sprintf("opaque ID scheme %q is unknown to this version (it knows %s); upgrade the ticketd Go client", name, strings.Join(known, ", ")))
}
