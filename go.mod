module github.com/whitebox-lstm/whitebox

go 1.26.8
