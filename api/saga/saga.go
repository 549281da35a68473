// Package saga is the vocabulary the sagas (workflows), their activities
// and the policies share: offerings and requirements a NodeClaim launches
// with, the disruption policy's decisions, methods and reasons, and the
// interruption kinds the notice parser names. It
// imports nothing of Joinery's, so policy packages use it without
// depending on the sagas. Its types are JSON in recorded workflow
// histories: change them as an API (add fields; never rename a JSON key).
package saga
