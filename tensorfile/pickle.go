package tensorfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/internal/visible"
)

// The values of the restricted pickle machine. Python's None is nil, int
// is int64 (or pbigint beyond 64 bits), float is float64, str is string.
type (
	pbytes  []byte // bytes
	pbigint string // an int beyond 64 bits: its little-endian two's complement bytes
	ptuple  []any  // tuple (immutable)
	plist   struct{ items []any }
	// pdict is a dict or OrderedDict, its items in insertion order.
	pdict struct {
		keys, vals []any
		index      map[any]int
	}
	// pglobal is an allow-listed global (a class or function), named by
	// module and name.
	pglobal struct{ module, name string }
	// pstorage is a storage named by a persistent id.
	pstorage struct {
		key      string
		dt       dtype
		numel    int64
		location string
	}
	// ptensor is the result of torch._utils._rebuild_tensor_v2.
	ptensor struct {
		storage      *pstorage
		offset       int64
		size, stride []int64
	}
)

func (g pglobal) String() string { return g.module + "." + g.name }

// The bounds of the pickle machine.
const (
	maxStack = 1 << 20 // values on the stack
	maxMarks = 1 << 10 // open MARKs (nesting of tuples, lists, dicts being built)
	maxMemo  = 1 << 22 // memo entries
	maxUnits = 1 << 24 // values created plus container slots filled
	maxLine  = 1 << 10 // a text line (GLOBAL's names, protocol 0 numbers)
)

// Allow-listed globals that are callables.
const (
	gOrderedDict       = "collections.OrderedDict"
	gRebuildTensorV2   = "torch._utils._rebuild_tensor_v2"
	gRebuildTensor     = "torch._utils._rebuild_tensor"
	gRebuildParam      = "torch._utils._rebuild_parameter"
	gRebuildParamState = "torch._utils._rebuild_parameter_with_state"
	gRebuildFromType   = "torch._tensor._rebuild_from_type_v2"
	gSize              = "torch.Size"
	gTensor            = "torch.Tensor"
	gParameter         = "torch.nn.parameter.Parameter"
)

var allowedCallables = map[string]bool{
	gOrderedDict: true, gRebuildTensorV2: true, gRebuildTensor: true, gRebuildParam: true,
	gRebuildParamState: true, gRebuildFromType: true, gSize: true, gTensor: true, gParameter: true,
}

// storageTypes maps torch's typed storage classes to dtypes.
var storageTypes = map[string]dtype{
	"DoubleStorage": dtF64, "FloatStorage": dtF32, "HalfStorage": dtF16, "BFloat16Storage": dtBF16,
	"LongStorage": dtI64, "IntStorage": dtI32, "ShortStorage": dtI16, "CharStorage": dtI8,
	"ByteStorage": dtU8, "BoolStorage": dtBool,
}

// torchDTypes are the dtype objects (torch.float32, ...) that may appear as
// values; they are accepted and ignored.
var torchDTypes = map[string]bool{
	"float64": true, "float32": true, "float16": true, "bfloat16": true, "double": true, "float": true,
	"half": true, "int64": true, "int32": true, "int16": true, "int8": true, "uint8": true, "bool": true,
	"long": true, "int": true, "short": true,
}

// storageDType returns the dtype of an allow-listed storage class.
func storageDType(g pglobal) (dtype, bool) {
	if g.module != "torch" && g.module != "torch.cuda" {
		return dtInvalid, false
	}
	d, ok := storageTypes[g.name]
	return d, ok
}

// checkGlobal refuses a global outside the allow-list, saying what the
// file probably is.
func (vm *pvm) checkGlobal(g pglobal) error {
	full := g.String()
	if allowedCallables[full] {
		return nil
	}
	if _, ok := storageDType(g); ok {
		return nil
	}
	if g.module == "torch" && torchDTypes[g.name] {
		return nil
	}
	var why string
	switch {
	case g.module == "__main__" || strings.HasPrefix(g.module, "torch.nn.") || full == "torch.nn.Module":
		why = "this is a whole pickled model, not a state_dict; save model.state_dict() instead"
	case strings.HasPrefix(g.module, "torch") && strings.HasSuffix(g.name, "Storage"):
		why = "this storage type is not supported (supported: Double, Float, Half, BFloat16, Long, Int, Short, Char, Byte and Bool storages)"
	case strings.HasPrefix(full, "torch._utils._rebuild_"):
		why = "this kind of tensor (sparse, quantized, on a special device, ...) is not supported"
	case strings.HasPrefix(g.module, "numpy"):
		why = "numpy arrays are not supported; save torch tensors"
	case strings.HasPrefix(g.module, "torch"):
		why = "only state_dicts of dense tensors are read"
	default:
		why = "only state_dicts of tensors are read, and reading never constructs arbitrary objects"
	}
	return vm.fail(ErrUnsupported, "the pickle refers to %s: %s", visible.String(full), why) // the file's names, escaped
}

// pvm is the restricted pickle machine: a stack machine over the opcodes
// torch.save emits. It never executes anything: the only "calls" it makes
// build dicts, tensors and tuples, from an allow-list.
type pvm struct {
	c     *ctx
	what  string // "data.pkl", "the object's pickle", ... for errors
	in    *pinput
	stack []any
	marks []int
	memo  map[uint32]any
	units int64
	// storages are the storages seen in persistent ids, by key; shared
	// across the pickles of one file.
	storages map[string]*pstorage
	opAt     int64 // offset of the current opcode, for errors
	// maxEnd, when positive, is the offset the pickle may not reach
	// (MaxHeaderBytes past its start).
	maxEnd int64
}

func newPVM(c *ctx, in *pinput, storages map[string]*pstorage) *pvm {
	return &pvm{c: c, in: in, memo: make(map[uint32]any), storages: storages}
}

func (vm *pvm) fail(kind error, format string, args ...any) *Error {
	return vm.c.errf(kind, "%s, byte %d: %s", vm.what, vm.opAt, fmt.Sprintf(format, args...))
}

func (vm *pvm) charge(n int64) error {
	vm.units += n
	if vm.units > maxUnits {
		return vm.fail(ErrLimit, "the pickle builds more than %d values", maxUnits)
	}
	return nil
}

func (vm *pvm) push(v any) error {
	if len(vm.stack) >= maxStack {
		return vm.fail(ErrLimit, "the pickle's stack grows past %d values", maxStack)
	}
	vm.stack = append(vm.stack, v)
	return nil
}

func (vm *pvm) pop() (any, error) {
	floor := 0
	if len(vm.marks) > 0 {
		floor = vm.marks[len(vm.marks)-1]
	}
	if len(vm.stack) <= floor {
		return nil, vm.fail(ErrFormat, "the pickle pops an empty stack")
	}
	v := vm.stack[len(vm.stack)-1]
	vm.stack = vm.stack[:len(vm.stack)-1]
	return v, nil
}

func (vm *pvm) top() (any, error) {
	floor := 0
	if len(vm.marks) > 0 {
		floor = vm.marks[len(vm.marks)-1]
	}
	if len(vm.stack) <= floor {
		return nil, vm.fail(ErrFormat, "the pickle reads an empty stack")
	}
	return vm.stack[len(vm.stack)-1], nil
}

// popMark pops the values above the last MARK, and the MARK.
func (vm *pvm) popMark() ([]any, error) {
	if len(vm.marks) == 0 {
		return nil, vm.fail(ErrFormat, "the pickle has no MARK to pop to")
	}
	m := vm.marks[len(vm.marks)-1]
	vm.marks = vm.marks[:len(vm.marks)-1]
	items := vm.stack[m:]
	vm.stack = vm.stack[:m]
	return items, nil
}

func (vm *pvm) setMemo(k uint32, v any) error {
	if _, ok := vm.memo[k]; !ok && len(vm.memo) >= maxMemo {
		return vm.fail(ErrLimit, "the pickle's memo grows past %d entries", maxMemo)
	}
	vm.memo[k] = v
	return nil
}

func (vm *pvm) getMemo(k uint32) error {
	v, ok := vm.memo[k]
	if !ok {
		return vm.fail(ErrFormat, "the pickle reads memo entry %d, which it never wrote", k)
	}
	return vm.push(v)
}

// Opcodes.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opMemoize        = 0x94
	opFrame          = 0x95
	opStackGlobal    = 0x93
)

// run executes one pickle, up to and including its STOP, and returns the
// object it builds.
func (vm *pvm) run() (any, error) {
	vm.stack, vm.marks = vm.stack[:0], vm.marks[:0]
	for {
		vm.opAt = vm.in.pos
		if vm.maxEnd > 0 && vm.in.pos >= vm.maxEnd {
			return nil, vm.tooLong()
		}
		op, err := vm.in.byte()
		if err != nil {
			return nil, vm.truncated(err)
		}
		if op == opStop {
			v, err := vm.pop()
			if err != nil {
				return nil, err
			}
			return v, nil
		}
		if err := vm.step(op); err != nil {
			return nil, err
		}
	}
}

func (vm *pvm) tooLong() error {
	return vm.fail(ErrLimit, "the pickle is longer than %d bytes (MaxHeaderBytes)", vm.c.opt.MaxHeaderBytes)
}

func (vm *pvm) truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return vm.fail(ErrFormat, "the pickle ends before its STOP opcode (the file is truncated)")
	}
	return &Error{File: vm.c.file, Msg: "reading " + vm.what, Kind: ErrFormat, Err: err}
}

// n reads an n-byte little-endian unsigned length or index.
func (vm *pvm) uintLE(n int) (uint64, error) {
	b, err := vm.in.next(int64(n))
	if err != nil {
		return 0, vm.truncated(err)
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

// data reads n bytes of a string or bytes opcode, n having been read from
// the pickle: it is checked against the bytes that remain first.
func (vm *pvm) data(n uint64) ([]byte, error) {
	if rem := vm.in.remaining(); n > uint64(rem) {
		return nil, vm.fail(ErrFormat, "a string of %d bytes, but only %s remain (truncated or corrupt)", n, plural(rem, "byte"))
	}
	if vm.maxEnd > 0 && n > uint64(vm.maxEnd-vm.in.pos) {
		return nil, vm.tooLong()
	}
	if err := vm.charge(int64(n/64) + 1); err != nil {
		return nil, err
	}
	b, err := vm.in.next(int64(n))
	if err != nil {
		return nil, vm.truncated(err)
	}
	return b, nil
}

func (vm *pvm) str(n uint64) error {
	b, err := vm.data(n)
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return vm.fail(ErrFormat, "a string is not valid UTF-8")
	}
	return vm.push(string(b))
}

func (vm *pvm) line() (string, error) {
	b, err := vm.in.line(maxLine)
	if err != nil {
		if err == errLongLine {
			return "", vm.fail(ErrFormat, "a text line longer than %d bytes", maxLine)
		}
		return "", vm.truncated(err)
	}
	return string(b), nil
}

func (vm *pvm) step(op byte) error {
	if err := vm.charge(1); err != nil {
		return err
	}
	switch op {
	case opProto:
		v, err := vm.uintLE(1)
		if err != nil {
			return err
		}
		if v > 5 {
			return vm.fail(ErrUnsupported, "pickle protocol %d (at most 5 is known)", v)
		}
	case opFrame:
		if _, err := vm.uintLE(8); err != nil {
			return err
		}
	case opGlobal:
		mod, err := vm.line()
		if err != nil {
			return err
		}
		name, err := vm.line()
		if err != nil {
			return err
		}
		return vm.global(mod, name)
	case opStackGlobal:
		name, err := vm.pop()
		if err != nil {
			return err
		}
		mod, err := vm.pop()
		if err != nil {
			return err
		}
		ms, ok1 := mod.(string)
		ns, ok2 := name.(string)
		if !ok1 || !ok2 {
			return vm.fail(ErrFormat, "STACK_GLOBAL of %s and %s, not two strings", describe(mod), describe(name))
		}
		return vm.global(ms, ns)
	case opBinPut, opLongBinPut:
		n := 1
		if op == opLongBinPut {
			n = 4
		}
		k, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		v, err := vm.top()
		if err != nil {
			return err
		}
		return vm.setMemo(uint32(k), v)
	case opPut:
		s, err := vm.line()
		if err != nil {
			return err
		}
		k, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return vm.fail(ErrFormat, "PUT of %q, not a memo index", truncate(s))
		}
		v, err := vm.top()
		if err != nil {
			return err
		}
		return vm.setMemo(uint32(k), v)
	case opMemoize:
		v, err := vm.top()
		if err != nil {
			return err
		}
		return vm.setMemo(uint32(len(vm.memo)), v)
	case opBinGet, opLongBinGet:
		n := 1
		if op == opLongBinGet {
			n = 4
		}
		k, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		return vm.getMemo(uint32(k))
	case opGet:
		s, err := vm.line()
		if err != nil {
			return err
		}
		k, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return vm.fail(ErrFormat, "GET of %q, not a memo index", truncate(s))
		}
		return vm.getMemo(uint32(k))
	case opMark:
		if len(vm.marks) >= maxMarks {
			return vm.fail(ErrLimit, "the pickle nests more than %d MARKs", maxMarks)
		}
		vm.marks = append(vm.marks, len(vm.stack))
	case opPop:
		_, err := vm.pop()
		return err
	case opPopMark:
		_, err := vm.popMark()
		return err
	case opDup:
		v, err := vm.top()
		if err != nil {
			return err
		}
		return vm.push(v)
	case opEmptyDict:
		return vm.push(newDict())
	case opEmptyList:
		return vm.push(&plist{})
	case opEmptyTuple:
		return vm.push(ptuple{})
	case opTuple, opList, opDict:
		items, err := vm.popMark()
		if err != nil {
			return err
		}
		if err := vm.charge(int64(len(items))); err != nil {
			return err
		}
		cp := append([]any(nil), items...)
		switch op {
		case opTuple:
			return vm.push(ptuple(cp))
		case opList:
			return vm.push(&plist{items: cp})
		}
		d := newDict()
		if err := vm.setItems(d, cp); err != nil {
			return err
		}
		return vm.push(d)
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		floor := 0
		if len(vm.marks) > 0 {
			floor = vm.marks[len(vm.marks)-1]
		}
		if len(vm.stack)-floor < n {
			return vm.fail(ErrFormat, "TUPLE%d on a stack of %d", n, len(vm.stack)-floor)
		}
		t := append(ptuple(nil), vm.stack[len(vm.stack)-n:]...)
		vm.stack = vm.stack[:len(vm.stack)-n]
		return vm.push(t)
	case opSetItem:
		v, err := vm.pop()
		if err != nil {
			return err
		}
		k, err := vm.pop()
		if err != nil {
			return err
		}
		d, err := vm.topDict()
		if err != nil {
			return err
		}
		return vm.setItems(d, []any{k, v})
	case opSetItems:
		items, err := vm.popMark()
		if err != nil {
			return err
		}
		items = append([]any(nil), items...)
		d, err := vm.topDict()
		if err != nil {
			return err
		}
		if len(items)%2 != 0 {
			return vm.fail(ErrFormat, "SETITEMS with an odd number of values")
		}
		return vm.setItems(d, items)
	case opAppend:
		v, err := vm.pop()
		if err != nil {
			return err
		}
		return vm.appendItems([]any{v})
	case opAppends:
		items, err := vm.popMark()
		if err != nil {
			return err
		}
		return vm.appendItems(append([]any(nil), items...))
	case opBinInt:
		v, err := vm.uintLE(4)
		if err != nil {
			return err
		}
		return vm.push(int64(int32(uint32(v))))
	case opBinInt1, opBinInt2:
		n := 1
		if op == opBinInt2 {
			n = 2
		}
		v, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		return vm.push(int64(v))
	case opLong1, opLong4:
		n := 1
		if op == opLong4 {
			n = 4
		}
		l, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		b, err := vm.data(l)
		if err != nil {
			return err
		}
		return vm.push(longValue(b))
	case opInt, opLong:
		s, err := vm.line()
		if err != nil {
			return err
		}
		if op == opInt && (s == "00" || s == "01") {
			return vm.push(s == "01")
		}
		s = strings.TrimSuffix(s, "L")
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return vm.fail(ErrUnsupported, "integer %q is not a 64-bit integer", truncate(s))
		}
		return vm.push(v)
	case opBinFloat:
		b, err := vm.in.next(8)
		if err != nil {
			return vm.truncated(err)
		}
		return vm.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case opFloat:
		s, err := vm.line()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return vm.fail(ErrFormat, "FLOAT of %q", truncate(s))
		}
		return vm.push(v)
	case opBinUnicode, opShortBinUni, opBinUnicode8, opBinString, opShortBinString:
		n := map[byte]int{opBinUnicode: 4, opShortBinUni: 1, opBinUnicode8: 8, opBinString: 4, opShortBinString: 1}[op]
		l, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		return vm.str(l)
	case opString:
		s, err := vm.line()
		if err != nil {
			return err
		}
		u, err := unquote(s)
		if err != nil {
			return vm.fail(ErrUnsupported, "STRING %s: %v", truncate(s), err)
		}
		return vm.push(u)
	case opShortBinBytes, opBinBytes, opBinBytes8:
		n := map[byte]int{opShortBinBytes: 1, opBinBytes: 4, opBinBytes8: 8}[op]
		l, err := vm.uintLE(n)
		if err != nil {
			return err
		}
		b, err := vm.data(l)
		if err != nil {
			return err
		}
		return vm.push(pbytes(append([]byte(nil), b...)))
	case opNone:
		return vm.push(nil)
	case opNewTrue:
		return vm.push(true)
	case opNewFalse:
		return vm.push(false)
	case opBinPersID:
		pid, err := vm.pop()
		if err != nil {
			return err
		}
		st, err := vm.persistentLoad(pid)
		if err != nil {
			return err
		}
		return vm.push(st)
	case opReduce, opNewObj:
		args, err := vm.pop()
		if err != nil {
			return err
		}
		fn, err := vm.pop()
		if err != nil {
			return err
		}
		v, err := vm.call(fn, args, op == opNewObj)
		if err != nil {
			return err
		}
		return vm.push(v)
	case opBuild:
		state, err := vm.pop()
		if err != nil {
			return err
		}
		inst, err := vm.top()
		if err != nil {
			return err
		}
		_ = state // a state_dict's _metadata, a parameter's state: ignored
		switch inst.(type) {
		case *pdict, *ptensor:
			return nil
		}
		return vm.fail(ErrUnsupported, "BUILD of %s (only dicts and tensors are built)", describe(inst))
	default:
		return vm.fail(ErrUnsupported, "pickle opcode 0x%02x is not supported (not one torch.save emits for a state_dict)", op)
	}
	return nil
}

func (vm *pvm) global(mod, name string) error {
	g := pglobal{mod, name}
	if err := vm.checkGlobal(g); err != nil {
		return err
	}
	return vm.push(g)
}

// longValue converts LONG1/LONG4 bytes: an int64 if it fits, else pbigint.
func longValue(b []byte) any {
	if len(b) > 8 {
		return pbigint(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if n := len(b); n > 0 && n < 8 && b[n-1]&0x80 != 0 { // sign-extend
		v |= ^uint64(0) << (8 * n)
	}
	return int64(v)
}

// unquote decodes a protocol-0 STRING argument: a Python repr of a str,
// single- or double-quoted, with the common escapes.
func unquote(s string) (string, error) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", fmt.Errorf("not a quoted string")
	}
	s = s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("ends in a backslash")
		}
		switch s[i] {
		case '\\', '\'', '"':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape")
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", fmt.Errorf("unsupported escape \\%c", s[i])
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", fmt.Errorf("not valid UTF-8")
	}
	return b.String(), nil
}

func newDict() *pdict { return &pdict{index: make(map[any]int)} }

// dictKey returns v as a Go map key, or false for a key this reader does
// not index (a tuple, a list, ...).
func dictKey(v any) (any, bool) {
	switch v.(type) {
	case nil, bool, int64, float64, string, pbigint:
		return v, true
	}
	return nil, false
}

func (vm *pvm) topDict() (*pdict, error) {
	v, err := vm.top()
	if err != nil {
		return nil, err
	}
	d, ok := v.(*pdict)
	if !ok {
		return nil, vm.fail(ErrFormat, "SETITEM on %s, not a dict", describe(v))
	}
	return d, nil
}

func (vm *pvm) setItems(d *pdict, kv []any) error {
	if err := vm.charge(int64(len(kv))); err != nil {
		return err
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k, ok := dictKey(kv[i])
		if !ok {
			return vm.fail(ErrUnsupported, "a dict key is %s (keys must be strings, numbers, booleans or None)", describe(kv[i]))
		}
		if j, dup := d.index[k]; dup {
			d.vals[j] = kv[i+1]
			continue
		}
		d.index[k] = len(d.keys)
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, kv[i+1])
	}
	return nil
}

func (vm *pvm) appendItems(items []any) error {
	v, err := vm.top()
	if err != nil {
		return err
	}
	l, ok := v.(*plist)
	if !ok {
		return vm.fail(ErrFormat, "APPEND to %s, not a list", describe(v))
	}
	if err := vm.charge(int64(len(items))); err != nil {
		return err
	}
	l.items = append(l.items, items...)
	return nil
}

// describe names a pickle value's type, without recursing.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64, pbigint:
		return "an int"
	case float64:
		return "a float"
	case string:
		return fmt.Sprintf("the str %q", truncate(v))
	case pbytes:
		return "a bytes"
	case ptuple:
		return fmt.Sprintf("a tuple of %d", len(v))
	case *plist:
		return fmt.Sprintf("a list of %d", len(v.items))
	case *pdict:
		return fmt.Sprintf("a dict of %d", len(v.keys))
	case pglobal:
		return visible.String(v.String())
	case *pstorage:
		return "a storage"
	case *ptensor:
		return "a tensor"
	}
	return fmt.Sprintf("%T", v)
}

// persistentLoad resolves a persistent id ('storage', storage_type, key,
// location, numel[, view_metadata]) to a storage, the same one for every
// id naming the same key.
func (vm *pvm) persistentLoad(pid any) (*pstorage, error) {
	t, ok := pid.(ptuple)
	if !ok || len(t) < 5 || len(t) > 6 || t[0] != "storage" {
		return nil, vm.fail(ErrUnsupported, "a persistent id that is %s, not ('storage', type, key, location, numel)", describe(pid))
	}
	g, ok := t[1].(pglobal)
	if !ok {
		return nil, vm.fail(ErrFormat, "a persistent id's storage type is %s", describe(t[1]))
	}
	dt, ok := storageDType(g)
	if !ok {
		return nil, vm.fail(ErrUnsupported, "storage type %s is not supported", visible.String(g.String()))
	}
	key, ok1 := t[2].(string)
	loc, ok2 := t[3].(string)
	n, ok3 := t[4].(int64)
	if !ok1 || !ok2 || !ok3 || n < 0 {
		return nil, vm.fail(ErrFormat, "a persistent id for a storage has key %s, location %s and numel %s", describe(t[2]), describe(t[3]), describe(t[4]))
	}
	if len(t) == 6 && t[5] != nil {
		return nil, vm.fail(ErrUnsupported, "storage %q is a view of another storage (view_metadata, written by very old PyTorch versions); this is not supported", key)
	}
	if st, ok := vm.storages[key]; ok {
		if st.dt != dt || st.numel != n {
			return nil, vm.fail(ErrFormat, "storage %q is named twice, as %d %s and as %d %s elements", key, st.numel, st.dt, n, dt)
		}
		return st, nil
	}
	st := &pstorage{key: key, dt: dt, numel: n, location: loc}
	vm.storages[key] = st
	return st, nil
}

// call applies an allow-listed callable (REDUCE) or class (NEWOBJ).
func (vm *pvm) call(fn, args any, newobj bool) (any, error) {
	g, ok := fn.(pglobal)
	if !ok {
		return nil, vm.fail(ErrUnsupported, "the pickle calls %s, not an allow-listed global", describe(fn))
	}
	a, ok := args.(ptuple)
	if !ok {
		return nil, vm.fail(ErrFormat, "the arguments of %s are %s, not a tuple", g, describe(args))
	}
	name := g.String()
	if newobj && name != gOrderedDict {
		return nil, vm.fail(ErrUnsupported, "NEWOBJ of %s (only collections.OrderedDict is constructed)", visible.String(g.String()))
	}
	switch name {
	case gOrderedDict:
		d := newDict()
		if len(a) == 0 {
			return d, nil
		}
		if l, ok := a[0].(*plist); ok && len(a) == 1 && !newobj {
			for _, it := range l.items {
				kv, ok := it.(ptuple)
				if !ok || len(kv) != 2 {
					return nil, vm.fail(ErrFormat, "OrderedDict of a list holding %s, not pairs", describe(it))
				}
				if err := vm.setItems(d, kv); err != nil {
					return nil, err
				}
			}
			return d, nil
		}
		return nil, vm.fail(ErrUnsupported, "OrderedDict called with %s", describe(args))
	case gRebuildTensorV2, gRebuildTensor:
		if (name == gRebuildTensor && len(a) != 4) || (name == gRebuildTensorV2 && len(a) != 6 && len(a) != 7) {
			return nil, vm.fail(ErrFormat, "%s with %d arguments", name, len(a))
		}
		return vm.rebuildTensor(a)
	case gRebuildParam, gRebuildParamState:
		if len(a) < 1 {
			return nil, vm.fail(ErrFormat, "%s without arguments", name)
		}
		if t, ok := a[0].(*ptensor); ok {
			return t, nil
		}
		return nil, vm.fail(ErrFormat, "%s of %s, not a tensor", name, describe(a[0]))
	case gRebuildFromType:
		// _rebuild_from_type_v2(func, type, args, state): func(*args) as
		// the given tensor type; only plain tensors and parameters.
		if len(a) != 4 {
			return nil, vm.fail(ErrFormat, "%s with %d arguments", name, len(a))
		}
		if ty, ok := a[1].(pglobal); !ok || (ty.String() != gTensor && ty.String() != gParameter) {
			return nil, vm.fail(ErrUnsupported, "%s of the type %s (only torch.Tensor and Parameter)", name, describe(a[1]))
		}
		if f, ok := a[0].(pglobal); !ok || (f.String() != gRebuildTensorV2 && f.String() != gRebuildTensor) {
			return nil, vm.fail(ErrUnsupported, "%s of %s", name, describe(a[0]))
		}
		return vm.call(a[0], a[2], false)
	case gSize:
		if len(a) == 1 {
			if t, ok := a[0].(ptuple); ok {
				return t, nil
			}
		}
		if len(a) == 0 {
			return ptuple{}, nil
		}
		return nil, vm.fail(ErrFormat, "torch.Size of %s", describe(args))
	}
	return nil, vm.fail(ErrUnsupported, "the pickle calls %s, which builds no tensor or dict", visible.String(g.String()))
}

// rebuildTensor builds a tensor from (storage, storage_offset, size,
// stride, ...). Only the types are checked here; the bounds are checked
// when the tensor is read, where its name is known.
func (vm *pvm) rebuildTensor(a ptuple) (any, error) {
	st, ok := a[0].(*pstorage)
	if !ok {
		return nil, vm.fail(ErrFormat, "a tensor's storage is %s", describe(a[0]))
	}
	off, ok := a[1].(int64)
	if !ok {
		return nil, vm.fail(ErrFormat, "a tensor's storage offset is %s", describe(a[1]))
	}
	size, err := vm.ints(a[2], "size")
	if err != nil {
		return nil, err
	}
	stride, err := vm.ints(a[3], "stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, vm.fail(ErrFormat, "a tensor's size has %d dimensions and its stride %d", len(size), len(stride))
	}
	return &ptensor{storage: st, offset: off, size: size, stride: stride}, nil
}

func (vm *pvm) ints(v any, what string) ([]int64, error) {
	t, ok := v.(ptuple)
	if !ok {
		return nil, vm.fail(ErrFormat, "a tensor's %s is %s, not a tuple", what, describe(v))
	}
	if len(t) > maxRank {
		return nil, vm.fail(ErrLimit, "a tensor's %s has %d dimensions (at most %d)", what, len(t), maxRank)
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok {
			return nil, vm.fail(ErrFormat, "a tensor's %s holds %s", what, describe(x))
		}
		out[i] = n
	}
	return out, nil
}
