import SignalVectorKit
// The command-line front end is written with the conformance engine (issue #2).
