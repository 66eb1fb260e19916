"""How the device spent its time: the step-time breakdown into kernel, copy, communication, CPU and
other (``breakdown``), utilization, SM efficiency and occupancy (``gpu_metrics``), Tensor Core eligibility
(``tensor_cores``)."""
