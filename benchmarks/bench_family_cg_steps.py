"""Conjugate-gradient steps to solve ``H x = g`` (rel. 1e-6) for the default Dirichlet fit, per preconditioner.

Measures why ``DirichletCalibrator()`` (L2, 1e-6 per entry) on cifar100_resnet20
(5,000 x 100) was slow: the Hessian of the full map at the temperature-scaling
start and at the optimum, preconditioned by its diagonal or its per-class
blocks, with and without the softmax-shift directions solved in closed form
(``skcal.scaling._affine._NullShift``). Prints the feature covariance spectrum
and the step counts (capped at 3,000).

Command (from the repository root)::

    OPENBLAS_NUM_THREADS=1 SKCAL_SHARED_DATA=../shared/data PYTHONPATH=. \\
        python benchmarks/bench_family_cg_steps.py
"""
import os
from pathlib import Path

import numpy as np

import skcal.scaling._affine as A
from skcal._backend import _matrix as mk, _numpy
from skcal.scaling._matrix import affine_penalty
d=np.load(Path(os.environ.get('SKCAL_SHARED_DATA', Path(__file__).resolve().parents[1].parent / 'shared' / 'data')) / 'cifar100_resnet20_chenyaofo.npz'); Z,y=d['logits_val'],d['y_val']
n,k=Z.shape
pen=affine_penalty("l2","full",k,n,1e-2,1e-2)
mean,cov=mk.feature_moments(Z,_numpy,True,1.0,covariance=True)
feat=mk.Features(True,1.0,mean,np.ones(k)); prob=A._Problem(k,"full",True,feat,A._whitening(cov))
print('feature cov eig (top, ratio of 10th/50th/last to top):', end=' ')
lam=np.linalg.eigvalsh(cov)[::-1]; print(lam[0], lam[9]/lam[0], lam[49]/lam[0], lam[-1]/lam[0])
# optimum via the fixed solver
beta, _ = A.start_scale(Z,y,None,_numpy)
W,b,_,it,st=A.fit_affine(Z,y,None,_numpy,structure="full",intercept=True,penalty=pen,log_features=True,w_start=beta)
print('fit', it, st, '|W|max', np.abs(W).max(), 'col sums max', np.abs(W.sum(0)).max())
theta0=prob.from_original(beta*np.eye(k), np.zeros(k)); theta=prob.from_original(W,b)
shift=A._NullShift(prob,pen)
for label,th in (('start (TS)',theta0),('optimum',theta)):
  for use_shift in (False,True):
    for block in (False,True):
        make=A._TrustRegionModel(Z,None,_numpy,prob,pen,shift if use_shift else None)
        hessp,pre=make(th,block=block)
        rng=np.random.default_rng(0); g=rng.normal(size=prob.n_params)
        if use_shift: g=shift.project(g)
        gs=pre.left(g)
        # plain CG on Hs x = gs to rel 1e-6
        Hs=lambda v: pre.left(hessp(pre.right(v)))
        x=np.zeros_like(gs); r=gs.copy(); p=r.copy(); rr=r@r; r0=np.sqrt(rr)
        for i in range(3000):
            Hp=Hs(p); a=rr/(p@Hp); x+=a*p; r-=a*Hp; rn=r@r
            if np.sqrt(rn)<=1e-6*r0: break
            p=r+(rn/rr)*p; rr=rn
        print(f'{label:10s} shift={use_shift!s:5} block={block!s:5}: CG steps to 1e-6: {i+1}')
