// Package share divides a budget among demands by water-filling, the rule
// of toolcap's batch budget and of the texts one result holds.
package share

// WaterFill shares budget among demands: a demand at most the fair share
// of what is left is met in full, and the others share what remains
// equally, the units integer division leaves over going one each to the
// earliest of them in order. No share exceeds its demand, the shares add up
// to at most budget, and they depend only on demand and budget. A demand
// of 0 or less gets 0.
func WaterFill(demand []int, budget int) []int {
	shares := make([]int, len(demand))
	open := make([]int, 0, len(demand)) // indices not yet met, in order
	for i, d := range demand {
		if d > 0 {
			open = append(open, i)
		}
	}
	left := budget
	for len(open) > 0 {
		fair := left / len(open)
		still := open[:0]
		for _, i := range open {
			if demand[i] <= fair {
				shares[i] = demand[i]
				left -= demand[i]
			} else {
				still = append(still, i)
			}
		}
		if len(still) == len(open) {
			break
		}
		open = still
	}
	if len(open) > 0 {
		fair, extra := left/len(open), left%len(open)
		for k, i := range open {
			shares[i] = fair
			if k < extra {
				shares[i]++
			}
		}
	}
	return shares
}
