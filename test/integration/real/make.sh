# requires: make
# make: pattern rules, functions, a parallel build, then an incremental one.
mkdir -p src
for i in $(seq 1 30); do echo "data $i" >src/f$i.in; done
cat >Makefile <<'MK'
INS := $(sort $(wildcard src/*.in))
OUTS := $(patsubst src/%.in,out/%.out,$(INS))
all: out/all.txt
out/%.out: src/%.in
	@mkdir -p out
	@tr a-z A-Z <$< >$@
out/all.txt: $(OUTS)
	@cat $(sort $^) >$@
print:
	@echo $(words $(OUTS)) $(firstword $(OUTS)) $(foreach x,1 2 3,[$(x)])
MK
make -s -j2 --no-print-directory
md5sum <out/all.txt
touch -d '2000-01-01' out/f3.out  # stale output: rebuilt, then all.txt too
make -s -j2 --no-print-directory
make --no-print-directory print
make -s -q all && echo up-to-date
