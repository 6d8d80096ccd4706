import statistics as st
rounds=[];cur={}
for l in open('pair_rounds.txt'):
    if l.startswith('round'):
        rounds.append(cur);cur={};continue
    f=l.split();cur[f[0]]=float(f[3])/1e6
rs=[];cs=[]
for i,r in enumerate(rounds):
    s=r['solo1'];t=r['team2'];a=r['pairA'];b=r['pairB']
    rs.append(s/t);cs.append(s/a+s/b)
    print(f"{i}: solo {s:.1f} team {t:.1f} -> {s/t:.2f}x ; pair {a:.1f}/{b:.1f} -> ceiling {s/a+s/b:.2f}x ; team/ceiling {s/t/(s/a+s/b):.2f}")
print("median team", st.median(rs), "median ceiling", st.median(cs))
