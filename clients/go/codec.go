package ticketd

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// Codec is a sequence's codec as the client sees it: the identity for an ordered sequence, or the
// sequence's keyed permutation for an opaque one.
type Codec struct {
	// IDs is "ordered" or "opaque".
	IDs string
	// Permutation is the opaque sequence's permutation; nil for an ordered one.
	Permutation *Permutation
}

// Encode is the ID ticketd serves for an ordered one.
func (c Codec) Encode(ordered uint64) (uint64, error) {
	if c.Permutation == nil {
		return ordered, nil
	}
	return c.Permutation.Encode(ordered)
}

// Decode is the ordered ID behind one ticketd served.
func (c Codec) Decode(id uint64) (uint64, error) {
	if c.Permutation == nil {
		return id, nil
	}
	return c.Permutation.Decode(id)
}

// decodeKey reads a key as ticketd sends it: base64url without padding.
func decodeKey(text string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(text, "="))
}

type settingsAnswer struct {
	IDs *string `json:"ids"`
}

type keyAnswer struct {
	Scheme     *string `json:"scheme"`
	Key        *string `json:"key"`
	SchemeKey  *string `json:"schemeKey"`
	StartAfter *wireID `json:"startAfter"`
	MaxID      *wireID `json:"maxId"`
}

// fetchCodec fetches the codec of a sequence from one of urls (an opaque one's key needs its own client token).
func fetchCodec(ctx context.Context, urls []string, sequence string, t *transport) (Codec, error) {
	var codec Codec
	ask := func(base string) (attempt, error) {
		base = base + "/v1/sequences/" + url.PathEscape(sequence)
		var settings settingsAnswer
		got, err := t.getJSON(ctx, "GET", base, nil, &settings, nil)
		if err != nil || !got.ok {
			return got, err
		}
		ids := ""
		if settings.IDs != nil {
			ids = *settings.IDs
		}
		if ids == "ordered" {
			codec = Codec{IDs: "ordered"}
			return got, nil
		}
		// Guessing "ordered" for a mode it does not know would hand out IDs another client may hold.
		if ids != "opaque" {
			return attempt{err: fmt.Sprintf("sequence %s has ids %q, unknown to this version; upgrade the ticketd Go client", sequence, ids), final: true}, nil
		}
		var key keyAnswer
		got, err = t.getJSON(ctx, "GET", base+"/id-key", nil, &key, func() bool {
			return key.Scheme != nil && key.StartAfter != nil && key.MaxID != nil
		})
		if err != nil || !got.ok {
			return got, err
		}
		scheme := *key.Scheme
		if _, known := PermutationSchemes[scheme]; !known {
			return attempt{err: fmt.Sprintf("sequence %s uses opaque ID scheme %q, unknown to this version; upgrade the ticketd Go client", sequence, scheme), final: true}, nil
		}
		encoded := key.SchemeKey
		if scheme == FirstPermutationScheme {
			encoded = key.Key
		}
		if encoded == nil {
			return attempt{err: "ticketd sent no key for scheme " + scheme, final: true}, nil
		}
		raw, err := decodeKey(*encoded)
		if err != nil {
			return attempt{err: "ticketd sent a key that is not base64url: " + err.Error()}, nil
		}
		p, err := NewPermutation(raw, uint64(*key.StartAfter), uint64(*key.MaxID), scheme)
		if err != nil {
			return attempt{}, err
		}
		codec = Codec{IDs: "opaque", Permutation: p}
		return got, nil
	}
	_, err := askInTurn(ctx, urls, 0, "no ticketd gave the codec of "+sequence, ask)
	return codec, err
}
