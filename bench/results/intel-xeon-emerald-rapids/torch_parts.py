"""PyTorch 2.x time per part of the attn-bench torch peer's call (median ms)."""
import sys, time, statistics, torch
import torch.nn.functional as F
torch.set_num_threads(2)
def med(f, n=25):
    for _ in range(3): f()
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1e3
def heads(Z, B, T, NH): return Z.view(B, T, NH, -1).transpose(1, 2)
for (name,B,T,C,NH,causal,wo) in [("gpt2",1,1024,768,12,True,True),("gpt2-b8",8,512,768,12,True,True),("head4096",1,4096,768,1,False,False),("head4096c",1,4096,768,1,True,False)]:
    D=C; hs=D//NH
    if name.startswith("head"): D=64; hs=64
    X=torch.randn(B,T,C); Wq,Wk,Wv=(torch.randn(C,D)*0.05 for _ in range(3)); Wo=torch.randn(D,C)*0.05
    Q,K,V=heads(X@Wq,B,T,NH),heads(X@Wk,B,T,NH),heads(X@Wv,B,T,NH)
    Y=F.scaled_dot_product_attention(Q,K,V,is_causal=causal)
    Yf=Y.transpose(1,2).reshape(B,T,D)
    proj=med(lambda: (X@Wq, X@Wk, X@Wv))
    att=med(lambda: F.scaled_dot_product_attention(Q,K,V,is_causal=causal))
    out=med(lambda: Yf@Wo) if wo else 0.0
    def full():
        q,k,v=heads(X@Wq,B,T,NH),heads(X@Wk,B,T,NH),heads(X@Wv,B,T,NH)
        y=F.scaled_dot_product_attention(q,k,v,is_causal=causal)
        return y.transpose(1,2).reshape(B,T,D)@Wo if wo else y
    tot=med(full)
    pf=3*2*B*T*C*D; of=2*B*T*D*C if wo else 0; af=4*B*T*T*D/(2 if causal else 1)
    print(f"{name}: projections {proj:.2f} ms ({pf/proj/1e6:.0f} GF/s), sdpa {att:.2f} ms ({af/att/1e6:.0f} GF/s), output {out:.2f} ms ({(of/out/1e6 if out else 0):.0f} GF/s), whole {tot:.2f} ms")
