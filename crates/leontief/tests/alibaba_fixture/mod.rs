//! A node list and a pod list in the Alibaba GPU trace's schema.

pub const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model
n0,32000,262144,0,
n1,96000,786432,8,V100M16
n2,96000,786432,8,V100M16
n3,64000,524288,2,T4
";

pub const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,12000,16384,1,1000,,LS,Running,0,100,0
p1,6000,12288,1,460,,LS,Running,10,200,12
p2,6000,12288,1,460,,BE,Running,10,200,12
p3,4000,8192,0,0,,BE,Running,50,,60
p4,8000,30000,2,1000,V100M16,LS,Pending,70,,
p5,0,0,0,0,,BE,Failed,0,1,0
";
