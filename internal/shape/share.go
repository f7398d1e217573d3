package shape

// WaterFill shares budget among demands by water-filling, the one rule
// toolcap shares a budget by (the texts of one result, the members of a
// structured value, the results of a batch): a demand at most the fair
// share of what is left is met in full, and the others share what remains
// equally, the units integer division leaves over going one each to the
// earliest of them in order. No share exceeds its demand, the shares add
// up to at most budget, and they depend only on demand and budget, never on
// the order in which the demands arrived. A demand of 0 or less gets 0, and
// so does every demand when budget <= 0.
func WaterFill(demand []int, budget int) []int {
	shares := make([]int, len(demand))
	open := make([]int, 0, len(demand)) // indices not yet met, in order
	for i, d := range demand {
		if d > 0 {
			open = append(open, i)
		}
	}
	left := max(budget, 0)
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
