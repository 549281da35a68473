// Package freeport picks loopback TCP ports for the local world's parts that
// must be told their port before they listen.
//
// Ports come from 11000-15999, below Linux's ephemeral range (32768-60999)
// and away from the fixed ports the local worlds use (16443 and up). A port
// asked of the kernel with ":0" is an ephemeral one: between its pick and the
// component's listen, any outgoing connection on the machine may take it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// low and high bound the range (high exclusive); tests narrow it.
var low, high = 11000, 16000

// Pick returns n distinct ports that nothing listens on now. It holds each
// picked port until all are picked, so the n are distinct from each other.
func Pick(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 50*n {
			return nil, fmt.Errorf("no %d free loopback ports in %d-%d after %d tries", n, low, high-1, tries)
		}
		p := low + rand.IntN(high-low)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		held = append(held, l)
		out = append(out, p)
	}
	return out, nil
}
