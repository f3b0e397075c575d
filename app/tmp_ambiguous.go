package app

import "errors"

// errAmbiguous stands in until the connection reports ambiguous responses.
var errAmbiguous = errors.New("placeholder")
