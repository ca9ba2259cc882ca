/* hunt62: float32 prod orders. numpy multiplies a float32 row left to right in float32, so its
   result is inf (or 0, or a sticky subnormal) wherever a prefix leaves float32 range; rulegrad
   multiplies lanes in float64 and rounds once. Compares the lane product, numpy's order, a
   sequential float64 product clamped to float32 outside its normal range, and a bound-guarded
   version (lanes, then the sequential one only when a bound fails).
   gcc -O3 -march=native -o /tmp/pb bench/prod_float32_orders.c -lm && /tmp/pb 0 && /tmp/pb 1 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <float.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) float lanes64(const float*a,long n){double p[8]={1,1,1,1,1,1,1,1};long i=0;for(;i+8<=n;i+=8)for(int j=0;j<8;j++)p[j]*=a[i+j];double r=1;for(int j=0;j<8;j++)r*=p[j];for(;i<n;i++)r*=a[i];return (float)r;}
__attribute__((noinline)) float seq32(const float*a,long n){float p=1;for(long i=0;i<n;i++)p*=a[i];return p;}
__attribute__((noinline)) float seqclamp(const float*a,long n){double p=1;for(long i=0;i<n;i++){p*=a[i];double m=fabs(p);if(!(m>=FLT_MIN&&m<=FLT_MAX))p=(float)p;}return (float)p;}
/* bound check pass (lanes) then the sequential clamp only when the bound fails */
__attribute__((noinline)) float guarded(const float*a,long n){double p[8]={1,1,1,1,1,1,1,1},hi[8]={1,1,1,1,1,1,1,1},lo[8]={1,1,1,1,1,1,1,1};long i=0;
 for(;i+8<=n;i+=8)for(int j=0;j<8;j++){double x=a[i+j],m=fabs(x);p[j]*=x;hi[j]*=m>1?m:1;lo[j]*=m<1?m:1;}
 double r=1,H=1,L=1;for(int j=0;j<8;j++){r*=p[j];H*=hi[j];L*=lo[j];}for(;i<n;i++){double x=a[i],m=fabs(x);r*=x;H*=m>1?m:1;L*=m<1?m:1;}
 if(H<=FLT_MAX&&L>=FLT_MIN)return (float)r;return seqclamp(a,n);}
int main(int c,char**v){long n=1<<20;float*a=malloc(n*4);int mode=atoi(v[1]);
 for(long i=0;i<n;i++)a[i]=mode==0?1.0f+ldexpf(1,-23):(float)(0.5+rand()/(double)RAND_MAX);
 float (*f[4])(const float*,long)={lanes64,seq32,seqclamp,guarded};const char*nm[4]={"lanes64","seq32","seqclamp","guarded"};
 for(int k=0;k<4;k++){volatile float s=0;double t0=now();for(int r=0;r<50;r++)s+=f[k](a,n);double t=(now()-t0)/50;printf("%-9s %8.1f us  value %.9g\n",nm[k],t*1e6,(double)f[k](a,n));}
 float b[3]={3e38f,10,1e-10f};for(int k=0;k<4;k++)printf("%s [3e38,10,1e-10] -> %g\n",nm[k],(double)f[k](b,3));}
