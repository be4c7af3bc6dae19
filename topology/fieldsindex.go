package topology

// FieldsIndex returns the index, among numTasks tasks of a bolt, of the
// task that ByFields sends a tuple to whose grouping values are values
// (in the order of the grouping's fields). A task's index is its place
// among its component's tasks (TaskInfo.Index), which trident passes to a
// state factory as the partition. It runs the grouping's own chooser, so
// it answers as the router does: for example, a store shared by every
// partition of a state can tell the keys of one partition from the
// others. It panics if numTasks is less than 1.
func FieldsIndex(values Values, numTasks int) int {
	if numTasks < 1 {
		panic("topology: FieldsIndex: numTasks < 1")
	}
	targets := make([]TaskID, numTasks)
	for i := range targets {
		targets[i] = TaskID(i)
	}
	index := make([]int, len(values))
	for i := range index {
		index[i] = i
	}
	f := fieldsChooser{targets: targets, index: index}
	return int(f.choose(0, values, nil)[0])
}
