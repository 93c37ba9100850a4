# Lab guest payload (lab.run=burn): keep every vCPU busy, so the host sees real
# run time and run-queue delay for each vCPU thread.
for i in $(seq "$(nproc)"); do
  (while :; do :; done) &
done
